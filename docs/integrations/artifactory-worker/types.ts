// The AFTER_CREATE event's shapes, as `jf worker init AFTER_CREATE` generates them (the
// fields this worker reads). SPDX-License-Identifier: GPL-3.0-or-later

export interface AfterCreateRequest {
    /** The stored artifact's metadata: never its bytes */
    metadata: UploadMetadata | undefined;
    headers: { [key: string]: Header };
    userContext: UserContext | undefined;
}

export interface UploadMetadata {
    repoPath: RepoPath | undefined;
    contentLength: number;
    lastModified: number;
    trustServerChecksums: boolean;
    /** Artifactory's base URL, e.g. https://host/artifactory */
    servletContextUrl: string;
    skipJarIndexing: boolean;
    disableRedirect: boolean;
    repoType: number;
}

export interface AfterCreateResponse {
    /** Printed to the worker's log (as a warning when something failed) */
    message: string;
}

export interface RepoPath {
    key: string;
    path: string;
    id: string;
    isRoot: boolean;
    isFolder: boolean;
}

export interface Header {
    value: string[];
}

export interface UserContext {
    id: string;
    isToken: boolean;
    realm: string;
}
