package service.gate

import rego.v1

default allow := false

read_only_effects := {"read", "list", "search"}

allowed_connectors := {"github", "slack", "jira"}

blocked_tools := ["*.delete_*", "admin.**"]

allow if {
	input.resource.tool_effect in read_only_effects
	connector_allowed
	count(deny) == 0
}

allow if {
	input.resource.tool_effect == "write"
	connector_allowed
	input.subject.binding.write_allowed == true
	within_working_hours
	count(deny) == 0
}

connector_allowed if input.resource.connector in allowed_connectors

within_working_hours if {
	[hour, _, _] := time.clock([time.now_ns(), "UTC"])
	hour >= 6
	hour < 22
}

deny contains msg if {
	some pattern in blocked_tools
	glob.match(pattern, ["."], input.resource.tool)
	msg := sprintf("tool %s is blocked by pattern %s", [input.resource.tool, pattern])
}

deny contains msg if {
	input.resource.tool_effect == "destructive"
	msg := sprintf("destructive tool %s needs approval for user %s", [input.resource.tool, input.subject.user])
}

deny contains msg if {
	ip := input.resource.args.target_ip
	not net.cidr_contains("10.0.0.0/8", ip)
	msg := sprintf("target %s is outside the private network", [ip])
}

deny contains msg if {
	not input.subject.task
	msg := "no task in the subject"
}
