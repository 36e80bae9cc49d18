// Stub of Artifactory's org.artifactory.exception.CancelException (its constructor and
// errorCode), for compiling and running the example plugin outside Artifactory.
// SPDX-License-Identifier: GPL-3.0-or-later
package org.artifactory.exception

class CancelException extends RuntimeException {
	final int errorCode

	CancelException(String message, int errorCode) {
		super(message)
		this.errorCode = errorCode
	}
}
