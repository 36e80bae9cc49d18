// Stub of Artifactory's org.artifactory.repo.RepoPathFactory.create(repoKey, path).
// SPDX-License-Identifier: GPL-3.0-or-later
package org.artifactory.repo

import groovy.transform.EqualsAndHashCode

class RepoPathFactory {
	static RepoPath create(String repoKey, String path) {
		return new SimpleRepoPath(repoKey: repoKey, path: path)
	}
}

@EqualsAndHashCode
class SimpleRepoPath implements RepoPath {
	String repoKey, path
	String getId() { "${repoKey}:${path}" }
	String getName() { path.tokenize('/').last() }
	boolean isFolder() { false }
	String toString() { id }
}
