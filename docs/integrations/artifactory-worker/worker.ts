// wheelgate AFTER_CREATE worker for JFrog Workers (Artifactory).
//
// Artifactory has stored the wheel when this runs: an AFTER_CREATE worker receives metadata,
// never the file's bytes, and cannot refuse the upload. So it asks `wheelgate serve` to
// fetch the stored artifact and check it (POST /v1/check/url), records the verdict as
// properties (wheelgate.verdict, wheelgate.rules, wheelgate.targets) and moves a failing wheel,
// or one it could not get a readable answer for, to a quarantine repository. To refuse a bad wheel BEFORE it is stored, point twine at the upload gate
// (`wheelgate serve --upstream`) instead; see ../README.md.
//
// Secrets (context.secrets):
//   wheelgate_url    base URL of wheelgate serve, e.g. https://wheelgate.internal:8443
//   wheelgate_token  the service's bearer token (--token), if it has one
//   quarantine_repo  where failing wheels go (default: pypi-quarantine)
//   on_unreadable    what to do when wheelgate's answer cannot be read (no answer, a timeout,
//                    a status other than 200/422, not JSON, a schema this worker does not
//                    know): "quarantine" (the default: move the wheel to quarantine_repo,
//                    wheelgate.verdict=unchecked) or "warn" (leave it where it is, marked
//                    unchecked, and say so in the log). Any other value is "quarantine".
//   check_timeout    seconds a check may take (default 60); past it the answer is unreadable
// wheelgate serve itself needs --fetch-allow https://HOST/artifactory/ and an Artifactory
// access token with read permission as --fetch-token (sent as a bearer token).
//
// wheelgate answers one of two documents (docs/check-json.md): without a fleet, the
// single-target `wheelgate.check/1` (its one input's `verdict`); with `targets:` in serve's
// config, the fleet envelope `wheelgate.fleet/1` (its top-level `verdict`, under the fleet's
// policy). Both are read; anything else fails closed unless on_unreadable is "warn".
//
// SPDX-License-Identifier: GPL-3.0-or-later
import { PlatformContext } from 'jfrog-workers';
import { AfterCreateRequest, AfterCreateResponse, RepoPath } from './types';

const DEFAULT_QUARANTINE = 'pypi-quarantine';
const DEFAULT_TIMEOUT_S = 60;

type Verdict = 'pass' | 'fail' | 'error';

/** What the worker decided, also returned in the message. */
interface Outcome {
    verdict: Verdict | 'unchecked';
    rules: string[];
    /** with a fleet: the targets the wheel failed on */
    targets: string[];
    moved: boolean;
    detail: string;
}

/** wheelgate's answer as this worker reads it. */
export interface Judgement {
    verdict: Verdict;
    rules: string[];
    targets: string[];
    detail: string;
}

/** An answer that is neither document (or not a consistent one). */
export class Unreadable extends Error {}

const SEVERITY_RANK: { [s: string]: number } = { info: 0, warning: 1, error: 2 };
const VERDICTS = ['pass', 'fail', 'error'];

function isVerdict(v: any): v is Verdict {
    return typeof v === 'string' && VERDICTS.includes(v);
}

/** A `wheelgate.check/1` document's one input verdict (it is checked to be one). */
function checkVerdict(doc: any, what: string): Verdict {
    if (!doc || typeof doc !== 'object' || doc.schema !== 'wheelgate.check/1')
        throw new Unreadable(`${what}: schema ${JSON.stringify(doc?.schema)}, not wheelgate.check/1`);
    const inputs = doc.inputs;
    if (!Array.isArray(inputs) || inputs.length !== 1 || !isVerdict(inputs[0]?.verdict))
        throw new Unreadable(`${what}: not one input with a verdict`);
    return inputs[0].verdict;
}

/** The rule ids of a `wheelgate.check/1` document's findings at or above its fail_on. */
export function blockingRules(doc: any): string[] {
    const floor = SEVERITY_RANK[doc?.fail_on] ?? SEVERITY_RANK.error;
    const ids = new Set<string>();
    for (const input of doc?.inputs ?? [])
        for (const f of input?.findings ?? [])
            if ((SEVERITY_RANK[f?.severity] ?? -1) >= floor && typeof f.rule === 'string')
                ids.add(f.rule);
    return [...ids].sort();
}

/**
 * Reads /v1/check's answer: the single-target document or the fleet envelope. The verdict is
 * the document's own (`inputs[0].verdict`, or the envelope's top-level `verdict`); the
 * blocking rules are those of the parts that made a fleet fail, as serve counts them: the
 * publish check when it failed, and every failing target when the targets failed under the
 * policy. Throws Unreadable for anything else.
 */
export function readAnswer(status: number, doc: any): Judgement {
    if (status !== 200 && status !== 422)
        throw new Unreadable(`wheelgate answered ${status}`);
    if (!doc || typeof doc !== 'object' || Array.isArray(doc))
        throw new Unreadable('the answer is not a JSON object');
    if (doc.schema === 'wheelgate.check/1') {
        const verdict = checkVerdict(doc, 'the answer');
        return { verdict, rules: verdict === 'fail' ? blockingRules(doc) : [], targets: [],
                 detail: `wheelgate: ${verdict}` };
    }
    if (doc.schema !== 'wheelgate.fleet/1')
        throw new Unreadable(`unknown schema ${JSON.stringify(doc.schema)} (this worker reads ` +
                             'wheelgate.check/1 and wheelgate.fleet/1)');
    if (!isVerdict(doc.verdict))
        throw new Unreadable(`fleet: verdict ${JSON.stringify(doc.verdict)}`);
    if (doc.policy !== 'every' && doc.policy !== 'any')
        throw new Unreadable(`fleet: policy ${JSON.stringify(doc.policy)}`);
    if (!Array.isArray(doc.targets) || !doc.targets.length)
        throw new Unreadable('fleet: no targets');
    const failed: any[] = [];
    for (const t of doc.targets) {
        if (typeof t?.name !== 'string' || !isVerdict(t?.verdict))
            throw new Unreadable('fleet: a target without a name or verdict');
        if (checkVerdict(t.check, `fleet: target ${t.name}`) !== t.verdict)
            throw new Unreadable(`fleet: target ${t.name}: two verdicts`);
        if (t.verdict !== 'pass')
            failed.push(t);
    }
    const verdict: Verdict = doc.verdict;
    const rules = new Set<string>();
    if (verdict === 'fail') {
        if (doc.publish != null && checkVerdict(doc.publish, 'fleet: publish') === 'fail')
            blockingRules(doc.publish).forEach((r) => rules.add(r));
        const targetsFailed = doc.policy === 'any' ? failed.length === doc.targets.length
            : failed.length > 0;
        if (targetsFailed)
            for (const t of failed)
                blockingRules(t.check).forEach((r) => rules.add(r));
    }
    const names = failed.map((t) => t.name);
    return {
        verdict, rules: [...rules].sort(), targets: verdict === 'pass' ? [] : names,
        detail: `wheelgate: ${verdict} (fleet of ${doc.targets.length}, policy ${doc.policy}` +
            (names.length ? `; fails on ${names.join(', ')}` : '') + ')',
    };
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
    if (o.targets.length)
        props.push(`wheelgate.targets=${o.targets.map(propValue).join(',')}`);
    await context.clients.platformHttp.put(
        `/artifactory/api/storage/${rp.key}/${encodePath(rp.path)}?recursive=0&properties=${props.join(';')}`);
}

/** on_unreadable: only "warn" lets an unchecked wheel stay; anything else quarantines it. */
function warnOnly(context: PlatformContext): boolean {
    return (context.secrets.get('on_unreadable') || '').trim().toLowerCase() === 'warn';
}

function timeoutMs(context: PlatformContext): number {
    const s = Number((context.secrets.get('check_timeout') || '').trim() || DEFAULT_TIMEOUT_S);
    return (Number.isFinite(s) && s > 0 ? s : DEFAULT_TIMEOUT_S) * 1000;
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
    const o: Outcome = { verdict: 'unchecked', rules: [], targets: [], moved: false, detail: '' };

    if (!base) {
        o.detail = 'no wheelgate_url secret: not checked';
    } else {
        const headers: { [h: string]: string } = { 'Content-Type': 'application/json' };
        if (token)
            headers.Authorization = `Bearer ${token}`;
        let res: { status: number; data: any } | null = null;
        try {
            res = await context.clients.axios.post(`${base}/v1/check/url`,
                { url, filename: rp.path.split('/').pop() },
                { headers, timeout: timeoutMs(context), validateStatus: () => true });
        } catch (e: any) {
            o.detail = `wheelgate unreachable: ${e?.message ?? e}`;
        }
        if (res) {
            try {
                const j = readAnswer(res.status, res.data);
                o.verdict = j.verdict;
                o.rules = j.rules;
                o.targets = j.targets;
                o.detail = j.detail;
            } catch (e: any) {
                // Unreadable, or anything else reading it threw: not a verdict either way.
                const text = typeof res.data === 'string' ? res.data : JSON.stringify(res.data);
                o.detail = `unreadable answer: ${e.message}: ${String(text).trim().slice(0, 300)}`;
            }
        }
    }
    // Fail closed: an unchecked wheel is quarantined unless on_unreadable is "warn".
    const warn = o.verdict === 'unchecked' && warnOnly(context);
    if (warn)
        o.detail += ' (on_unreadable=warn: left in place)';
    await setProperties(context, rp, o);
    // An unreadable wheel ("error") is no better than a failing one.
    if (o.verdict === 'fail' || o.verdict === 'error' || (o.verdict === 'unchecked' && !warn)) {
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
                (o.targets.length ? ` on ${o.targets.join(', ')}` : '') +
                (o.moved ? ', moved to quarantine' : '') + (o.detail ? `; ${o.detail}` : ''),
        };
    } catch (e: any) {
        return { message: `wheelgate worker failed: ${e?.status ? `HTTP ${e.status}: ` : ''}${e?.message ?? e}` };
    }
};
