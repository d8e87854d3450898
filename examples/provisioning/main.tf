# A platform team's setup, kept in git and applied with
#   service-proxy-cli provision plan|apply --dir examples/provisioning
# (see README.md here). Needs the server's feature `policies` for the two policy kinds.

variable "team" {
  description = "the realm the team's sources and memory live in"
  default     = "platform"
}

variable "code_host_token" {
  description = "a code-host personal access token (pass it with TF_VAR_code_host_token)"
  sensitive   = true
}

variable "chat_channel" {
  default = "#platform-alerts"
}

resource "service_realm" "team" {
  name         = var.team
  display_name = "Platform team"
  color        = "#3b82f6"
}

resource "service_agent" "oncall" {
  agent_type = "assistant"
  name       = "oncall"
}

# the code host the agents read; its config is sensitive (kept in state, masked by the API)
resource "service_source" "code_host" {
  name        = "code host"
  source_type = "github"
  realm       = service_realm.team.name
  config = {
    auth  = { kind = "pat", token = var.code_host_token }
    orgs  = ["acme"]
  }
}

resource "service_memory" "runbook" {
  content     = "Failed deployments: check the last commit on main and its author first."
  title       = "Deployment runbook"
  tags        = ["runbook", "deployments"]
  realm       = service_realm.team.name
}

resource "service_skill" "triage" {
  name    = "Deployment triage"
  slug    = "deployment-triage"
  content = "Find the commit, its author and the last healthy build; answer in one paragraph."
  tags    = ["deployments"]
}

# the build server posts failures here; the task only sees the code host
resource "service_task" "deploy_failures" {
  name             = "deploy failures"
  trigger_type     = "webhook"
  message_template = "The deployment {{trigger.body.deployment.id}} failed. Diagnose it."
  system_prompt    = "You diagnose failed deployments."
  response_channel = var.chat_channel
  source_ids       = [service_source.code_host.id]
}

resource "service_task" "morning_summary" {
  name             = "morning summary"
  cron_expression  = "0 8 * * 1-5"
  timezone         = "Europe/Paris"
  message_template = "Summarize stale pull requests. Failures are reported through ${service_task.deploy_failures.webhook_url}."
  response_channel = var.chat_channel
  source_ids       = [service_source.code_host.id]
}

# an endpoint a dashboard system posts its alerts to
resource "service_webhook" "alerts" {
  name             = "dashboard alerts"
  description      = "alerts from the dashboard system"
  payload_template = "Alert: {{trigger.body.title}}"
  system_prompt    = "You triage alerts and say who should look."
}

resource "service_policy_source" "shared" {
  name        = "shared"
  source_type = "inline"
  modules = {
    "lib/tools.rego" = "package lib.tools\n\nread_only_effects := {\"read\"}\n"
  }
}

resource "service_policy" "read_only" {
  name      = "read_only"
  rego_code = <<-EOT
    package service.read_only

    deny contains msg if {
      input.resource.tool_effect != "read"
      msg := "the platform agents only read"
    }
  EOT
}

resource "service_channel" "alerts" {
  channel_type  = "slack"
  display_name  = "Platform alerts"
  system_prompt = "Answer infrastructure questions from the code host and memory."
  source_ids    = [service_source.code_host.id]
  response_mode = "agent"
}

resource "service_api_key" "ci" {
  name        = "ci"
  permissions = ["graph:read"]
  source_ids  = [service_source.code_host.id]
}

data "service_permissions" "all" {}

output "deploy_failures_url" {
  value = service_task.deploy_failures.webhook_url
}

# the build server signs its posts with this (X-Service-Signature); read it with
#   service-proxy-cli provision output deploy_failures_secret
output "deploy_failures_secret" {
  value     = service_task.deploy_failures.webhook_secret
  sensitive = true
}

output "alerts_url" {
  value = service_webhook.alerts.url
}
