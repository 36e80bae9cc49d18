// wheelgate AFTER_CREATE worker for JFrog Workers (Artifactory).
//
// Artifactory has stored the wheel when this runs: an AFTER_CREATE worker receives metadata,
// never the file's bytes, and cannot refuse the upload. So it asks `wheelgate serve` to
// fetch the stored artifact and check it (POST /v1/check/url), records the verdict as
// properties (wheelgate.verdict, wheelgate.rules) and moves a failing wheel to a quarantine
// repository. To refuse a bad wheel BEFORE it is stored, point twine at the upload gate
// (`wheelgate serve --upstream`) instead; see ../README.md.
//
// Secrets (context.secrets):
//   wheelgate_url    base URL of wheelgate serve, e.g. https://wheelgate.internal:8443
//   wheelgate_token  the service's bearer token (--token), if it has one
//   quarantine_repo  where failing wheels go (default: pypi-quarantine)
// wheelgate serve itself needs --fetch-allow https://HOST/artifactory/ and an Artifactory
// access token with read permission as --fetch-token (sent as a bearer token).
//
// SPDX-License-Identifier: GPL-3.0-or-later
import { PlatformContext } from 'jfrog-workers';
import { AfterCreateRequest, AfterCreateResponse, RepoPath } from './types';

const DEFAULT_QUARANTINE = 'pypi-quarantine';
const CHECK_TIMEOUT_MS = 60000;

/** What the worker decided, also returned in the message. */
interface Outcome {
    verdict: 'pass' | 'fail' | 'error' | 'unchecked';
    rules: string[];
    moved: boolean;
    detail: string;
}

const SEVERITY_RANK: { [s: string]: number } = { info: 0, warning: 1, error: 2 };

/** The rule ids of the findings at or above the document's fail_on severity. */
export function blockingRules(doc: any): string[] {
    const floor = SEVERITY_RANK[doc?.fail_on] ?? SEVERITY_RANK.error;
    const ids = new Set<string>();
    for (const input of doc?.inputs ?? [])
        for (const f of input?.findings ?? [])
            if ((SEVERITY_RANK[f?.severity] ?? -1) >= floor && typeof f.rule === 'string')
                ids.add(f.rule);
    return [...ids].sort();
}

/** A property value as Artifactory's ?properties= takes it: its separators escaped. */
function propValue(v: string): string {
    return encodeURIComponent(v.replace(/([\\,|=;])/g, '\\$1'));
}

function encodePath(path: string): string {
    return path.split('/').map(encodeURIComponent).join('/');
}

async function setProperties(context: PlatformContext, rp: RepoPath, o: Outcome) {
    const props = [`wheelgate.verdict=${propValue(o.verdict)}`];
    if (o.rules.length)
        props.push(`wheelgate.rules=${o.rules.map(propValue).join(',')}`);
    await context.clients.platformHttp.put(
        `/artifactory/api/storage/${rp.key}/${encodePath(rp.path)}?recursive=0&properties=${props.join(';')}`);
}

export async function checkWheel(context: PlatformContext, data: AfterCreateRequest): Promise<Outcome | null> {
    const rp = data.metadata?.repoPath;
    if (!rp || rp.isFolder || !rp.path.endsWith('.whl'))
        return null;
    const base = (context.secrets.get('wheelgate_url') || '').replace(/\/+$/, '');
    const token = context.secrets.get('wheelgate_token');
    const quarantine = context.secrets.get('quarantine_repo') || DEFAULT_QUARANTINE;
    const artifactory = (data.metadata?.servletContextUrl || '').replace(/\/+$/, '');
    const url = `${artifactory}/${rp.key}/${encodePath(rp.path)}`;
    const o: Outcome = { verdict: 'unchecked', rules: [], moved: false, detail: '' };

    if (!base) {
        o.detail = 'no wheelgate_url secret: not checked';
    } else {
        const headers: { [h: string]: string } = { 'Content-Type': 'application/json' };
        if (token)
            headers.Authorization = `Bearer ${token}`;
        try {
            const res = await context.clients.axios.post(`${base}/v1/check/url`,
                { url, filename: rp.path.split('/').pop() },
                { headers, timeout: CHECK_TIMEOUT_MS, validateStatus: () => true });
            if (res.status === 200 || res.status === 422) {
                const doc = res.data;
                const v = doc?.inputs?.[0]?.verdict;
                o.verdict = v === 'pass' || v === 'fail' || v === 'error' ? v : 'unchecked';
                o.rules = blockingRules(doc);
                o.detail = `wheelgate: ${o.verdict}`;
            } else {
                const text = typeof res.data === 'string' ? res.data : JSON.stringify(res.data);
                o.detail = `wheelgate answered ${res.status}: ${String(text).trim().slice(0, 300)}`;
            }
        } catch (e: any) {
            o.detail = `wheelgate unreachable: ${e?.message ?? e}`;
        }
    }
    await setProperties(context, rp, o);
    // An unreadable wheel ("error") is no better than a failing one.
    if (o.verdict === 'fail' || o.verdict === 'error') {
        await context.clients.platformHttp.post(
            `/artifactory/api/move/${rp.key}/${encodePath(rp.path)}?to=/${quarantine}/${encodePath(rp.path)}`);
        o.moved = true;
    }
    return o;
}

export default async (context: PlatformContext, data: AfterCreateRequest): Promise<AfterCreateResponse> => {
    try {
        const o = await checkWheel(context, data);
        if (!o)
            return { message: 'not a wheel: skipped' };
        return {
            message: `${data.metadata?.repoPath?.id}: ${o.verdict}` +
                (o.rules.length ? ` (${o.rules.join(', ')})` : '') +
                (o.moved ? ', moved to quarantine' : '') + (o.detail ? `; ${o.detail}` : ''),
        };
    } catch (e: any) {
        return { message: `wheelgate worker failed: ${e?.status ? `HTTP ${e.status}: ` : ''}${e?.message ?? e}` };
    }
};
