-- :checkhealth agentdoc — runs `agentdoc doctor --json` and reports each check.
local M = {}

-- Neovim 0.7 has the `health` module; 0.8+ has vim.health (0.10 renamed its functions).
local function reporter()
  local h = vim.health or require("health")
  return {
    start = h.start or h.report_start,
    ok = h.ok or h.report_ok,
    warn = h.warn or h.report_warn,
    error = h.error or h.report_error,
  }
end

function M.check()
  local report = reporter()
  local agentdoc = require("agentdoc")
  report.start("agentdoc")
  local command = agentdoc.config.command
  if vim.fn.executable(command) ~= 1 then
    report.error(command .. " is not on PATH", { "in a clone of agentdoc: pipx install . (or uv tool install .)" })
    return
  end
  local output = vim.fn.system({ command, "doctor", "--json", vim.fn.getcwd() })
  local ok, decoded = pcall(vim.fn.json_decode, output)
  if not ok or type(decoded) ~= "table" or type(decoded.checks) ~= "table" then
    report.error("agentdoc doctor gave no report: " .. output)
    return
  end
  for _, check in ipairs(decoded.checks) do
    local line = check.name .. ": " .. check.detail
    local advice = check.fix ~= vim.NIL and check.fix and { check.fix } or {}
    if check.outcome == "ok" then
      report.ok(line)
    elseif check.outcome == "warn" then
      report.warn(line, advice)
    else
      report.error(line, advice)
    end
  end
end

return M
