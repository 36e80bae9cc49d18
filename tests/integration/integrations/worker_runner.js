// Runs the compiled AFTER_CREATE worker once, as JFrog Workers would, with a context whose
// clients are real HTTP clients (Node's fetch): platformHttp against ART_BASE (the test's
// repository), axios against any URL (wheelgate serve). Prints {"message": ...} on stdout.
// Usage: node worker_runner.js WORKER_JS ART_BASE REPO_KEY PATH SECRETS_JSON
// SPDX-License-Identifier: GPL-3.0-or-later
'use strict';
const [workerJs, artBase, repoKey, path, secretsJson] = process.argv.slice(2);
const secrets = JSON.parse(secretsJson);

async function body(res) {
    const text = await res.text();
    const ct = res.headers.get('content-type') || '';
    if (ct.includes('json')) {
        try { return JSON.parse(text); } catch (e) { /* as text */ }
    }
    return text;
}

function platformCall(method) {
    return async (endpoint, data, headers) => {
        const res = await fetch(artBase + endpoint, {
            method,
            headers: Object.assign({ Authorization: 'Bearer platform-token' }, headers || {}),
            body: data === undefined ? undefined : JSON.stringify(data),
            signal: AbortSignal.timeout(30000),
        });
        const out = { status: res.status, data: await body(res), headers: {} };
        if (res.status >= 400) {
            const e = new Error(`HTTP ${res.status}`);
            e.status = res.status;
            throw e;
        }
        return out;
    };
}

const context = {
    clients: {
        platformHttp: {
            get: (e, h) => platformCall('GET')(e, undefined, h),
            post: platformCall('POST'),
            put: platformCall('PUT'),
            patch: platformCall('PATCH'),
            delete: (e, h) => platformCall('DELETE')(e, undefined, h),
        },
        axios: {
            async post(url, data, config) {
                config = config || {};
                const res = await fetch(url, {
                    method: 'POST',
                    headers: config.headers || {},
                    body: JSON.stringify(data),
                    signal: AbortSignal.timeout(config.timeout || 60000),
                });
                const out = { status: res.status, data: await body(res) };
                const ok = config.validateStatus ? config.validateStatus(res.status)
                    : res.status < 400;
                if (!ok) {
                    const e = new Error(`Request failed with status code ${res.status}`);
                    e.response = out;
                    throw e;
                }
                return out;
            },
        },
    },
    secrets: { get: (k) => secrets[k] },
    platformToken: 'platform-token',
    baseUrl: artBase,
    wait: (ms) => new Promise((r) => setTimeout(r, ms)),
};

const data = {
    metadata: {
        repoPath: { key: repoKey, path, id: `${repoKey}:${path}`, isRoot: false, isFolder: false },
        contentLength: 0, lastModified: 0, trustServerChecksums: false,
        servletContextUrl: artBase + '/artifactory', skipJarIndexing: false,
        disableRedirect: false, repoType: 1,
    },
    headers: {},
    userContext: { id: 'ci-bot', isToken: true, realm: 'internal' },
};

require(workerJs).default(context, data).then(
    (r) => { process.stdout.write(JSON.stringify(r) + '\n'); },
    (e) => { process.stderr.write('worker threw: ' + (e && e.stack || e) + '\n'); process.exit(1); });
