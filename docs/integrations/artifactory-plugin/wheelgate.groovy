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
		return c
	}
}

def conf = WheelgateConf.load(new File(ctx.artifactoryHome.etcDir, 'plugins/wheelgate.properties'))
def severityRank = [info: 0, warning: 1, error: 2]

/* The wheel's bytes to /v1/check; [verdict, rules, detail]. */
def check = { RepoPath rp ->
	if (!conf.url)
		return ['unchecked', [], 'no url in wheelgate.properties']
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
		if (status != 200 && status != 422) {
			def text = http.errorStream?.getText('UTF-8') ?: ''
			return ['unchecked', [], "wheelgate answered ${status}: ${text.take(300).trim()}"]
		}
		def doc = new JsonSlurper().parse(http.inputStream, 'UTF-8')
		int floor = severityRank[doc.fail_on] ?: 2
		def rules = (doc.inputs ?: []).collectMany { it.findings ?: [] }
			.findAll { (severityRank[it.severity] ?: -1) >= floor }*.rule.unique().sort()
		return [doc.inputs?.getAt(0)?.verdict ?: 'unchecked', rules, 'wheelgate: checked']
	} catch (IOException e) {
		return ['unchecked', [], "wheelgate unreachable: ${e.message}"]
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
		def (verdict, rules, detail) = check(rp)
		repositories.setProperty(rp, 'wheelgate.verdict', verdict as String)
		if (rules)
			repositories.setProperty(rp, 'wheelgate.rules', *(rules as List<String>))
		if (verdict == 'fail' || verdict == 'error') {
			def to = RepoPathFactory.create(conf.quarantine, rp.path)
			def status = repositories.move(rp, to)
			if (status.isError())
				log.error("wheelgate: ${rp.id}: ${verdict} (${rules.join(', ')}); moving it to " +
					"${conf.quarantine} failed: ${status.lastError?.message}")
			else
				log.warn("wheelgate: ${rp.id}: ${verdict} (${rules.join(', ')}); moved to ${to.id}")
		} else {
			log.info("wheelgate: ${rp.id}: ${verdict}; ${detail}")
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
	}
}
