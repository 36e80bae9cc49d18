/*
 * Runs the example user plugin the way Artifactory does (the script evaluated with ctx,
 * log and repositories bound, its storage { } and download { } closures collected), against
 * a repository tree on disk: ROOT/KEY/PATH. Then: afterCreate for ROOT/KEY/PATH, and
 * beforeDownload wherever the wheel is afterwards. Prints one JSON object.
 * Usage: groovy -cp CLASSES run_plugin.groovy PLUGIN ETC_DIR ROOT KEY PATH
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
import groovy.json.JsonOutput
import org.artifactory.exception.CancelException
import org.artifactory.repo.RepoPath
import org.artifactory.repo.RepoPathFactory

def (plugin, etcDir, root, key, path) = args as List

class FakeItem {
	RepoPath repoPath
	boolean isFolder() { false }
}

class FakeContent {
	InputStream inputStream
	void close() { inputStream.close() }
}

class FakeStatus {
	boolean error
	boolean isError() { error }
	Map getLastError() { error ? [message: 'rename failed'] : null }
}

class FakeRepos {
	File root
	Map<String, Map<String, List<String>>> props = [:]
	List moves = []

	File file(RepoPath rp) { new File(new File(root, rp.repoKey), rp.path) }
	def getContent(RepoPath rp) {
		def f = file(rp)
		if (!f.isFile())
			throw new FileNotFoundException(rp.id)
		return new FakeContent(inputStream: f.newInputStream())
	}
	def setProperty(RepoPath rp, String k, String... values) {
		props.computeIfAbsent(rp.id) { [:] }[k] = values as List
	}
	String getProperty(RepoPath rp, String k) { props[rp.id]?.get(k)?.join(',') }
	def move(RepoPath from, RepoPath to) {
		def t = file(to)
		t.parentFile.mkdirs()
		boolean ok = file(from).renameTo(t)
		if (ok) {
			moves << [from.id, to.id]
			if (props.containsKey(from.id))
				props[to.id] = props.remove(from.id)
		}
		return new FakeStatus(error: !ok)
	}
}

class Collector {
	Map<String, Closure> handlers = [:]
	def methodMissing(String name, args) { handlers[name] = args[0] as Closure }
}

def repos = new FakeRepos(root: new File(root))
def logged = []
def log = [info: { logged << ['info', it.toString()] }, warn: { logged << ['warn', it.toString()] },
	   error: { logged << ['error', it.toString()] }, debug: {}] as Expando
def handlers = [:]
def section = { String name -> { Closure c ->
	def col = new Collector()
	c.delegate = col
	c.resolveStrategy = Closure.DELEGATE_FIRST
	c()
	col.handlers.each { k, v -> handlers["${name}.${k}"] = v }
} }
def binding = new Binding(ctx: [artifactoryHome: [etcDir: new File(etcDir)]], log: log,
			  repositories: repos, storage: section('storage'),
			  download: section('download'))
new GroovyShell(this.class.classLoader, binding).evaluate(new File(plugin))

def rp = RepoPathFactory.create(key, path)
def item = new FakeItem(repoPath: rp)
handlers['storage.afterCreate'].call(item)
def now = repos.moves ? RepoPathFactory.create(repos.moves[-1][1].split(':', 2)[0], path) : rp
def download = 'allowed'
try {
	handlers['download.beforeDownload'].call(null, now)
} catch (CancelException e) {
	download = "${e.errorCode}: ${e.message}"
}
println JsonOutput.toJson([handlers: handlers.keySet().sort(), props: repos.props,
			   moves: repos.moves, download: download, log: logged])
