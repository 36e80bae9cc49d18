-- wrk script for bench/serve.sh: POSTs one wheel to /v1/check?filename=NAME.
-- SPDX-License-Identifier: GPL-3.0-or-later
--   wrk -s bench/serve.lua URL -- WHEEL [VERDICT]
-- WHEEL: the wheel to post (its file name is the ?filename=).
-- VERDICT: the verdict every answer must carry ("pass" or "fail"); an answer without it is
--   counted as a wrong answer (reading the bodies costs wrk some time, so it is optional).
-- done() prints one machine-readable line, "RESULT key=value ...", that serve.sh reads.

local threads = {}

function setup(thread)
	table.insert(threads, thread)
end

function init(args)
	local path = args[1]
	local f = assert(io.open(path, "rb"), "cannot open " .. tostring(path))
	local body = f:read("*a")
	f:close()
	local name = path:match("([^/]+)$")
	verdict = args[2]
	answered, non2xx, wrong = 0, 0, 0
	wrk.method = "POST"
	wrk.body = body
	wrk.headers["Content-Type"] = "application/octet-stream"
	wrk.path = "/v1/check?filename=" .. name:gsub("[^%w%-%._~]", function(c)
		return string.format("%%%02X", string.byte(c))
	end)
end

function response(status, headers, body)
	answered = answered + 1
	if status < 200 or status > 299 then
		non2xx = non2xx + 1
	elseif verdict and not body:find('"verdict": *"' .. verdict .. '"') then
		wrong = wrong + 1
	end
end

function done(summary, latency, requests)
	local e = summary.errors
	local non2xx_t, wrong_t = 0, 0
	for _, t in ipairs(threads) do
		non2xx_t = non2xx_t + (t:get("non2xx") or 0)
		wrong_t = wrong_t + (t:get("wrong") or 0)
	end
	local secs = summary.duration / 1e6
	io.write(string.format(
		"RESULT requests=%d seconds=%.2f rps=%.2f p50_ms=%.1f p90_ms=%.1f p99_ms=%.1f " ..
		"max_ms=%.1f connect=%d read=%d write=%d timeout=%d status=%d non2xx=%d wrong=%d " ..
		"bytes=%d\n",
		summary.requests, secs, summary.requests / secs,
		latency:percentile(50) / 1000, latency:percentile(90) / 1000,
		latency:percentile(99) / 1000, latency.max / 1000,
		e.connect, e.read, e.write, e.timeout, e.status, non2xx_t, wrong_t, summary.bytes))
end
