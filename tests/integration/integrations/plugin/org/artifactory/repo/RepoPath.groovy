// Stub of Artifactory's org.artifactory.repo.RepoPath (the getters the plugin uses).
// SPDX-License-Identifier: GPL-3.0-or-later
package org.artifactory.repo

interface RepoPath {
	String getRepoKey()
	String getPath()
	String getId()
	String getName()
	boolean isFolder()
}
