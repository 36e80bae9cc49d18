/*
 * The pipeline check, audit, scan and check --lock share (pipeline.h): configuration ->
 * rules -> targets -> environment -> known findings -> each input judged.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline.h"
#include "lock.h"

void pipeline_fail(const pipeline *p, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "%s: ", p->prog);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
}

int pipeline_option(pipeline *p, int c, const char *arg)
{
	static const char *const names[] = {"target", "gpu", "rules", "disable", "enable",
					    "config", "no-config", "fail-on", "profile",
					    "baseline", "format"};
	cli_config *cli = &p->cli;
	int bad = 0;
	switch (c) {
	case PO_TARGET: bad = cfg_add(cli, "target", arg); break;
	case PO_GPU: bad = cfg_add_csv(cli, "gpu", arg); break;
	case PO_RULES: bad = cfg_add(cli, "rules", arg); break;
	case PO_DISABLE: bad = cfg_add_csv(cli, "disable", arg); break;
	case PO_ENABLE: bad = cfg_add_csv(cli, "enable", arg); break;
	case PO_CONFIG: p->config = arg; break;
	case PO_NOCONFIG: p->no_config = true; break;
	case PO_FAILON: bad = cfg_add(cli, "fail-on", arg); break;
	case PO_PROFILE: bad = cfg_add(cli, "profile", arg); break;
	case PO_BASELINE: bad = cfg_add(cli, "baseline", arg); break;
	case PO_FORMAT: bad = cfg_add(cli, "format", arg); break;
	default: return 1;
	}
	if (bad) {
		pipeline_fail(p, "too many values for --%s\n", names[c - PO_TARGET]);
		return EXIT_USAGE;
	}
	return 0;
}

int pipeline_configure(pipeline *p, bool formats)
{
	char err[1024];
	int found = 0;
	cli_config *cfg = &p->cfg;
	const cli_config *cli = &p->cli;
	if (!p->no_config) {
		const char *config = p->config;
		int rc;
		if (config)
			rc = wg_has_suffix_cli(config, ".toml")
				     ? cfg_read_pyproject(cfg, config, &found, err, sizeof(err))
				     : cfg_read_yaml(cfg, config, &found, err, sizeof(err));
		else
			rc = cfg_find(cfg, &found, err, sizeof(err));
		if (rc == 0 && config && !found) {
			snprintf(err, sizeof(err), "%s: not found%s", config,
				 wg_has_suffix_cli(config, ".toml") ? " (or no [tool.wheelgate] table)"
								    : "");
			rc = -1;
		}
		if (rc < 0) {
			pipeline_fail(p, "%s\n", esc(err));
			return EXIT_USAGE;
		}
		/* One found in a directory above names itself: it is not where one looks first. */
		if (found && !config && !p->quiet && strchr(cfg->source, '/'))
			fprintf(stderr, "%s: configuration from %s\n", p->prog, esc(cfg->source));
	}
	p->cfg_selectors = cfg->ndisable + cfg->nenable;
	for (size_t i = 0; i < cli->nrules; i++) cfg_add(cfg, "rules", cli->rules[i]);
	for (size_t i = 0; i < cli->ndisable; i++) cfg_add(cfg, "disable", cli->disable[i]);
	for (size_t i = 0; i < cli->nenable; i++) cfg_add(cfg, "enable", cli->enable[i]);
	for (size_t i = 0; i < cli->ngpus; i++) cfg_add(cfg, "gpu", cli->gpus[i]);
	for (size_t i = 0; i < cli->ntargets; i++) cfg_add(cfg, "target", cli->targets[i]);
	if (cli->fail_on) cfg_add(cfg, "fail-on", cli->fail_on);
	if (cli->profile) cfg_add(cfg, "profile", cli->profile);
	if (cli->format) cfg_add(cfg, "format", cli->format);
	if (cli->baseline) cfg_add(cfg, "baseline", cli->baseline);

	p->format = cfg->format && formats ? cfg->format : "text";
	if (formats && strcmp(p->format, "text") && strcmp(p->format, "json") &&
	    strcmp(p->format, "sarif") && strcmp(p->format, "github")) {
		pipeline_fail(p, "--format takes text, json, sarif or github, not '%s'\n",
			      esc(p->format));
		return EXIT_USAGE;
	}
	p->profile = wg_profile_parse(cfg->profile ? cfg->profile : "auto");
	if (p->profile < 0) {
		pipeline_fail(p, "--profile takes install, publish or auto, not '%s'\n",
			      esc(cfg->profile));
		return EXIT_USAGE;
	}
	int fail_on = cfg_severity(cfg->fail_on ? cfg->fail_on : "error");
	if (fail_on < 0) {
		pipeline_fail(p, "--fail-on takes error, warning or info, not '%s'\n",
			      esc(cfg->fail_on));
		return EXIT_USAGE;
	}
	p->fail_on = (wg_severity)fail_on;
	return -1;
}

int pipeline_rules(pipeline *p, const wg_options *opts)
{
	wg_ruleset_options ro = WG_RULESET_OPTIONS_INIT;
	ro.rule_paths = (const char *const *)p->cfg.rules;
	ro.nrule_paths = p->cfg.nrules;
	ro.disable = (const char *const *)p->cfg.disable;
	ro.ndisable = p->cfg.ndisable;
	ro.enable = (const char *const *)p->cfg.enable;
	ro.nenable = p->cfg.nenable;
	if (wg_context_new(&p->ctx, opts) < 0 || wg_ruleset_new(&p->rs, p->ctx, &ro) < 0) {
		pipeline_fail(p, "%s\n", esc(wg_error_last()));
		/* A selector may come from the file rather than the command line: say which file. */
		if (!p->rs && p->cfg_selectors && p->cfg.source &&
		    (strstr(wg_error_last(), "--disable:") || strstr(wg_error_last(), "--enable:")))
			pipeline_fail(p, "(the rules to enable and disable include those of %s)\n",
				      esc(p->cfg.source));
		return EXIT_USAGE;
	}
	return -1;
}

int pipeline_env_resolve(const pipeline *p, const char *arg, char *out, size_t n, char *why,
			 size_t whylen, const char *label)
{
	char note[1024];
	int rc = env_resolve(arg, out, n, note, sizeof(note), why, whylen);
	if (rc < 0) {
		pipeline_fail(p, "%s %s\n", label, why);
		return EXIT_USAGE;
	}
	if (rc == 0)
		why[0] = '\0';
	return -1;
}

int pipeline_env_open(pipeline *p, wg_env **env, wg_scanner **sc, const char *path,
		      const char *why, const char *label)
{
	wg_env_options eo = WG_ENV_OPTIONS_INIT;
	if (wg_scanner_new(sc, p->ctx) < 0 || wg_env_open(env, *sc, path, &eo) < 0) {
		pipeline_fail(p, "%s: %s%s%s\n", label,
			      esc(*sc ? wg_scanner_error(*sc) : wg_error_last()), *why ? "; " : "",
			      why);
		wg_scanner_free(*sc);
		*sc = NULL;
		return EXIT_USAGE;
	}
	return -1;
}

int pipeline_target(const pipeline *p, wg_target **t, const pipeline_target_spec *ts)
{
	const char *set = ts->set;
	if (wg_target_new(t) < 0 ||
	    wg_target_set(*t, "profile", wg_profile_name((wg_profile)ts->profile)) < 0) {
		pipeline_fail(p, "%s\n", esc(wg_error_last()));
		return EXIT_USAGE;
	}
	if (ts->env)
		wg_target_set_env(*t, ts->env);
	for (size_t i = 0; i < p->cfg.ntargets; i++)
		if (wg_target_parse(*t, p->cfg.targets[i]) < 0) {
			pipeline_fail(p, "%s\n", esc(wg_error_last()));
			return EXIT_USAGE;
		}
	if (ts->facts && ts->facts[0] && wg_target_parse(*t, ts->facts) < 0) {
		pipeline_fail(p, "--target-set %s: %s\n", esc(set), esc(wg_error_last()));
		return EXIT_USAGE;
	}
	for (size_t i = 0; i < p->cfg.ngpus + ts->ngpus; i++) {
		const char *g = i < p->cfg.ngpus ? p->cfg.gpus[i] : ts->gpus[i - p->cfg.ngpus];
		if (wg_target_add_gpu(*t, p->ctx, g) < 0) {
			if (set)
				pipeline_fail(p, "--target-set %s: gpu: %s\n", esc(set),
					      esc(wg_error_last()));
			else
				pipeline_fail(p, "--gpu: %s\n", esc(wg_error_last()));
			return EXIT_USAGE;
		}
		/* Said here: a scan record has no not_applied list to carry it. */
		bool set_gpu = set && i >= p->cfg.ngpus;
		if (!strcmp(g, "auto") && wg_target_notice(*t))
			pipeline_fail(p, "%s%s%s: %s: GPU rules do not apply\n",
				      set_gpu ? "--target-set " : "", set_gpu ? esc(set) : "",
				      set_gpu ? ": gpu=auto" : "--gpu auto",
				      esc(wg_target_notice(*t)));
	}
	return -1;
}

const char *pipeline_target_python(const pipeline *p, const wg_env *env, char *buf, size_t n,
				   const char **from)
{
	wg_env_info ei = WG_ENV_INFO_INIT;
	if (env && wg_env_get_info(&ei, env) == 0 && ei.python_version) {
		snprintf(buf, n, "%s", ei.python_version);
		*from = "--env";
		return buf;
	}
	for (size_t i = p->cfg.ntargets; i-- > 0;) {
		const char *py = strstr(p->cfg.targets[i], "python=");
		if (py && (py == p->cfg.targets[i] || py[-1] == ',')) {
			snprintf(buf, n, "%.*s", (int)strcspn(py + 7, ","), py + 7);
			*from = "--target";
			return buf;
		}
	}
	*from = "the python3 on PATH";
	return lock_python_on_path(buf, n);
}

int pipeline_suppress(pipeline *p, bool always)
{
	if (!p->cfg.nignores && !p->cfg.baseline && !always)
		return -1;
	char serr[1024];
	if (!(p->sup = suppress_new(p->cfg.ignores, p->cfg.nignores, serr, sizeof(serr))) ||
	    suppress_check_rules(p->sup, p->rs, serr, sizeof(serr)) < 0 ||
	    (p->cfg.baseline && suppress_load_baseline(p->sup, p->cfg.baseline, serr,
						       sizeof(serr)) < 0)) {
		bool ign = !strncmp(serr, "ignore", 6) && p->cfg.source;
		pipeline_fail(p, "%s%s%s\n", ign ? esc(p->cfg.source) : "", ign ? ": " : "",
			      esc(serr));
		suppress_free(p->sup);
		p->sup = NULL;
		return EXIT_USAGE;
	}
	return -1;
}

int pipeline_judge(wg_report **rep, wg_scanner *sc, const wg_ruleset *rs, const wg_scan *scan,
		   const wg_target *t, wg_env *env, wg_scanner *env_sc, bool install,
		   pthread_mutex_t *env_lock, char *err, size_t errlen)
{
	int rc = 0;
	*rep = NULL;
	if (env_lock)
		pthread_mutex_lock(env_lock);
	/* A wheel checked against an environment is an install of it alone there. */
	install = install && env && wg_scan_get_kind(scan) == WG_SCAN_WHEEL;
	const wg_scan *one = scan;
	if (install && wg_env_set_install(env, env_sc, &one, 1) < 0) {
		snprintf(err, errlen, "%s", wg_scanner_error(env_sc));
		rc = -1;
	} else if (wg_check(rep, sc, rs, scan, t) < 0) {
		snprintf(err, errlen, "%s", wg_scanner_error(sc));
		rc = -1;
	}
	if (install)
		wg_env_set_install(env, env_sc, NULL, 0);
	if (env_lock)
		pthread_mutex_unlock(env_lock);
	if (rc < 0) {
		wg_report_free(*rep);
		*rep = NULL;
	}
	return rc;
}

void pipeline_free(pipeline *p)
{
	suppress_free(p->sup);
	wg_ruleset_free(p->rs);
	wg_context_free(p->ctx);
	cfg_free(&p->cfg);
	cfg_free(&p->cli);
	p->sup = NULL;
	p->rs = NULL;
	p->ctx = NULL;
}
