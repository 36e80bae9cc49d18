/*
 * wheelgate user plugin for self-hosted Artifactory (Groovy; copy to
 * $JFROG_HOME/artifactory/var/etc/artifactory/plugins/ with wheelgate.properties beside it).
 *
 * What it can and cannot block: Artifactory's beforeCreate gets an item's metadata, never its
 * bytes, so no plugin can check a wheel before it is stored. This one acts right after:
 *   storage.afterCreate   reads the stored wheel (repositories.getContent), posts its bytes to
 *                         wheelgate serve's /v1/check, sets wheelgate.verdict and
 *                         wheelgate.rules, and moves a failing (or unreadable) wheel to the
 *                         quarantine repository;
 *   download.beforeDownload refuses (403) a wheel whose wheelgate.verdict is fail or error,
 *                         for the time between the store and the move, or where moving failed.
 * To refuse a bad wheel before any repository stores it, put the upload gate
 * (`wheelgate serve --upstream ...`) in front of the repository; see ../README.md.
 *
 * wheelgate.properties (Java properties):
 *   url=https://wheelgate.internal:8443   wheelgate serve's base URL
 *   token=...                             its bearer token (--token), if it has one
 *   quarantine=pypi-quarantine            where failing wheels go
 *   repos=pypi-local                      the repositories to check (comma-separated; empty: all)
 *   timeout=120                           seconds a check may take
 *   on_unreadable=quarantine              when wheelgate's answer cannot be read (no answer, a
 *                                         timeout, a status other than 200/422, not JSON, a
 *                                         schema this plugin does not know): quarantine (the
 *                                         default: wheelgate.verdict=unchecked, moved, and
 *                                         downloads refused) or warn (marked unchecked, left in
 *                                         place, downloadable, a warning logged). Any other
 *                                         value is quarantine.
 *
 * wheelgate answers one of two documents (docs/check-json.md): without a fleet, the
 * single-target wheelgate.check/1 (its one input's verdict); with targets: in serve's config,
 * the fleet envelope wheelgate.fleet/1 (its top-level verdict, under the fleet's policy).
 * Both are read; anything else fails closed unless on_unreadable=warn.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
import groovy.json.JsonSlurper
import org.artifactory.exception.CancelException
import org.artifactory.repo.RepoPath
import org.artifactory.repo.RepoPathFactory

class WheelgateConf {
	String url, token, quarantine = 'pypi-quarantine'
	List<String> repos = []
	int timeout = 120
	boolean warnOnly = false

	static WheelgateConf load(File f) {
		def p = new Properties()
		if (f.isFile())
			f.withInputStream { p.load(it) }
		def c = new WheelgateConf()
		c.url = p.getProperty('url')?.trim()?.replaceAll('/+$', '')
		c.token = p.getProperty('token')?.trim() ?: null
		c.quarantine = p.getProperty('quarantine')?.trim() ?: c.quarantine
		c.repos = (p.getProperty('repos') ?: '').split(',')*.trim().findAll { it }
		c.timeout = (p.getProperty('timeout') ?: '120') as int
		c.warnOnly = p.getProperty('on_unreadable')?.trim()?.toLowerCase() == 'warn'
		return c
	}
}

/* An answer that is neither of wheelgate's documents. */
class WheelgateUnreadable extends Exception {
	WheelgateUnreadable(String m) { super(m) }
}

/*
 * /v1/check's answer, the single-target document or the fleet envelope, as
 * [verdict, rules, failing targets, detail]; throws WheelgateUnreadable for anything else. The verdict
 * is the document's own (inputs[0].verdict, or the envelope's top-level verdict); the rules
 * are those of the parts that made a fleet fail, as serve counts them.
 */
class WheelgateAnswer {
	static final Map<String, Integer> RANK = [info: 0, warning: 1, error: 2]
	static final List<String> VERDICTS = ['pass', 'fail', 'error']

	static String checkVerdict(doc, String what) {
		if (!(doc instanceof Map) || doc.schema != 'wheelgate.check/1')
			throw new WheelgateUnreadable("${what}: schema ${doc instanceof Map ? doc.schema : null}, " +
				'not wheelgate.check/1')
		def inputs = doc.inputs
		if (!(inputs instanceof List) || inputs.size() != 1 || !(inputs[0] instanceof Map) ||
		    !(inputs[0].verdict in VERDICTS))
			throw new WheelgateUnreadable("${what}: not one input with a verdict")
		return inputs[0].verdict
	}

	static List<String> blockingRules(Map doc) {
		int floor = RANK.containsKey(doc.fail_on) ? RANK[doc.fail_on] : 2
		return (doc.inputs ?: []).collectMany { it.findings ?: [] }
			.findAll { it instanceof Map && RANK.containsKey(it.severity) &&
				   RANK[it.severity] >= floor && it.rule instanceof String }
			*.rule.unique().sort()
	}

	static List read(int status, doc) {
		if (status != 200 && status != 422)
			throw new WheelgateUnreadable("wheelgate answered ${status}")
		if (!(doc instanceof Map))
			throw new WheelgateUnreadable('the answer is not a JSON object')
		if (doc.schema == 'wheelgate.check/1') {
			def v = checkVerdict(doc, 'the answer')
			return [v, v == 'fail' ? blockingRules(doc) : [], [], "wheelgate: ${v}".toString()]
		}
		if (doc.schema != 'wheelgate.fleet/1')
			throw new WheelgateUnreadable("unknown schema ${doc.schema} (this plugin reads " +
				'wheelgate.check/1 and wheelgate.fleet/1)')
		if (!(doc.verdict in VERDICTS))
			throw new WheelgateUnreadable("fleet: verdict ${doc.verdict}")
		if (!(doc.policy in ['every', 'any']))
			throw new WheelgateUnreadable("fleet: policy ${doc.policy}")
		if (!(doc.targets instanceof List) || !doc.targets)
			throw new WheelgateUnreadable('fleet: no targets')
		def failed = []
		for (t in doc.targets) {
			if (!(t instanceof Map) || !(t.name instanceof String) || !(t.verdict in VERDICTS))
				throw new WheelgateUnreadable('fleet: a target without a name or verdict')
			if (checkVerdict(t.check, "fleet: target ${t.name}") != t.verdict)
				throw new WheelgateUnreadable("fleet: target ${t.name}: two verdicts")
			if (t.verdict != 'pass')
				failed << t
		}
		String v = doc.verdict
		def rules = new TreeSet<String>()
		if (v == 'fail') {
			if (doc.publish != null && checkVerdict(doc.publish, 'fleet: publish') == 'fail')
				rules.addAll(blockingRules(doc.publish))
			boolean targetsFailed = doc.policy == 'any' ? failed.size() == doc.targets.size()
				: !failed.isEmpty()
			if (targetsFailed)
				failed.each { rules.addAll(blockingRules(it.check)) }
		}
		def names = failed*.name
		def detail = "wheelgate: ${v} (fleet of ${doc.targets.size()}, policy ${doc.policy}" +
			(names ? "; fails on ${names.join(', ')}" : '') + ')'
		return [v, rules as List, v == 'pass' ? [] : names, detail.toString()]
	}
}

def conf = WheelgateConf.load(new File(ctx.artifactoryHome.etcDir, 'plugins/wheelgate.properties'))

/* The wheel's bytes to /v1/check; [verdict, rules, failing targets, detail]. */
def check = { RepoPath rp ->
	if (!conf.url)
		return ['unchecked', [], [], 'no url in wheelgate.properties']
	def name = rp.path.tokenize('/').last()
	def http = (HttpURLConnection) new URL(conf.url + '/v1/check?filename=' +
		URLEncoder.encode(name, 'UTF-8')).openConnection()
	try {
		http.requestMethod = 'POST'
		http.doOutput = true
		http.connectTimeout = 10000
		http.readTimeout = conf.timeout * 1000
		http.setChunkedStreamingMode(64 * 1024)
		http.setRequestProperty('Content-Type', 'application/octet-stream')
		if (conf.token)
			http.setRequestProperty('Authorization', 'Bearer ' + conf.token)
		def content = repositories.getContent(rp)
		try {
			http.outputStream.withStream { out -> out << content.inputStream }
		} finally {
			content.close()
		}
		int status = http.responseCode
		def stream = status < 400 ? http.inputStream : http.errorStream
		String text = stream?.getText('UTF-8') ?: ''
		def doc = null
		try {
			doc = new JsonSlurper().parseText(text)
		} catch (Exception e) {
			doc = null   // not JSON: WheelgateWheelgateAnswer.read says so
		}
		try {
			return WheelgateAnswer.read(status, doc)
		} catch (WheelgateUnreadable e) {
			return ['unchecked', [], [], "unreadable answer: ${e.message}: ${text.take(300).trim()}"]
		}
	} catch (IOException e) {
		// No answer: refused, reset, a timeout.
		return ['unchecked', [], [], "wheelgate unreachable: ${e.class.simpleName}: ${e.message}"]
	} catch (Exception e) {
		// Anything else that went wrong is no verdict either.
		return ['unchecked', [], [], "check failed: ${e.class.simpleName}: ${e.message}"]
	} finally {
		http.disconnect()
	}
}

storage {
	afterCreate { item ->
		RepoPath rp = item.repoPath
		if (item.isFolder() || !rp.path.endsWith('.whl') || rp.repoKey == conf.quarantine)
			return
		if (conf.repos && !(rp.repoKey in conf.repos))
			return
		def (verdict, rules, targets, detail) = check(rp)
		repositories.setProperty(rp, 'wheelgate.verdict', verdict as String)
		if (rules)
			repositories.setProperty(rp, 'wheelgate.rules', *(rules as List<String>))
		if (targets)
			repositories.setProperty(rp, 'wheelgate.targets', *(targets as List<String>))
		def what = "${verdict}" + (rules ? " (${rules.join(', ')})" : '') +
			(targets ? " on ${targets.join(', ')}" : '')
		// Fail closed: an unchecked wheel goes to quarantine too, unless on_unreadable=warn.
		if (verdict == 'fail' || verdict == 'error' || (verdict == 'unchecked' && !conf.warnOnly)) {
			def to = RepoPathFactory.create(conf.quarantine, rp.path)
			def status = repositories.move(rp, to)
			if (status.isError())
				log.error("wheelgate: ${rp.id}: ${what}; moving it to " +
					"${conf.quarantine} failed: ${status.lastError?.message}; ${detail}")
			else
				log.warn("wheelgate: ${rp.id}: ${what}; moved to ${to.id}; ${detail}")
		} else if (verdict == 'unchecked') {
			log.warn("wheelgate: ${rp.id}: unchecked, left in place (on_unreadable=warn); ${detail}")
		} else {
			log.info("wheelgate: ${rp.id}: ${what}; ${detail}")
		}
	}
}

download {
	beforeDownload { request, RepoPath rp ->
		if (!rp.path.endsWith('.whl'))
			return
		def v = repositories.getProperty(rp, 'wheelgate.verdict')
		if (v == 'fail' || v == 'error')
			throw new CancelException("wheelgate: ${rp.id} failed its check (" +
				(repositories.getProperty(rp, 'wheelgate.rules') ?: v) + ')', 403)
		if (v == 'unchecked' && !conf.warnOnly)
			throw new CancelException("wheelgate: ${rp.id} could not be checked " +
				'(on_unreadable=quarantine)', 403)
	}
}
