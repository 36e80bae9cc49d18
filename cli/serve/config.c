/*
 * The YAML config of `wheelgate serve` and its fleet of targets. (Stub: filled in next.)
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
#include <stdlib.h>
#include <string.h>

#include "serve.h"

int config_load(serve_config *cfg, const char *path, char *err, size_t errlen)
{
	(void)cfg;
	snprintf(err, errlen, "%s: config files are not read yet", path);
	return -1;
}

int config_targets_open(serve_config *cfg, wg_context *ctx, wg_scanner *sc, char *err,
			size_t errlen)
{
	(void)cfg, (void)ctx, (void)sc, (void)err, (void)errlen;
	return 0;
}

void config_free(serve_config *cfg)
{
	for (size_t i = 0; i < cfg->ntargets; i++) {
		serve_target *t = &cfg->targets[i];
		free(t->name);
		free(t->spec);
		free(t->site_packages);
		for (size_t j = 0; j < t->ngpus; j++)
			free(t->gpus[j]);
		free(t->gpus);
		wg_target_free(t->target);
		wg_env_free(t->env);
	}
	free(cfg->targets);
	for (size_t i = 0; i < cfg->nfetch_allow; i++)
		free(cfg->fetch_allow[i]);
	free(cfg->fetch_allow);
	free(cfg->listen);
	free(cfg->token);
	free(cfg->upstream);
	free(cfg->fetch_token);
	free(cfg->spool_dir);
	memset(cfg, 0, sizeof(*cfg));
}
