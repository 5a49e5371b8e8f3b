package ecsfake

import (
	"regexp"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/ecs/types"
)

// The awslogs options a container's logConfiguration must carry, from the
// ECS API reference's LogConfiguration data type
// (https://docs.aws.amazon.com/AmazonECS/latest/APIReference/API_LogConfiguration.html),
// options:
//
//   - "awslogs-region Required: Yes"
//   - "awslogs-group Required: Yes"
//   - "awslogs-stream-prefix Required: Yes, when using Fargate. Optional
//     when using EC2."
//   - "awslogs-create-group Required: No. Specify whether you want the log
//     group to be created automatically. If this option isn't specified, it
//     defaults to false."
//
// The messages are the ones ECS's RegisterTaskDefinition returns, as its
// users report them: "Log driver awslogs requires options: awslogs-region,
// awslogs-group", "Log driver awslogs option 'awslogs-group' should not be
// null or empty.", "Log driver awslogs option 'awslogs-group' contains
// invalid characters.", "Log driver awslogs option 'awslogs-create-group'
// should only be set to 'true', else omit option." and "Fargate requires
// log configuration options to include awslogs-stream-prefix to support log
// driver awslogs.".

// logGroupRE is a CloudWatch Logs log group name: "Length Constraints:
// Minimum length of 1. Maximum length of 512. Pattern: [\.\-_/#A-Za-z0-9]+"
// (CloudWatch Logs API Reference, CreateLogGroup).
var logGroupRE = regexp.MustCompile(`^[.\-_/#A-Za-z0-9]{1,512}$`)

// checkAwslogs applies the awslogs rules to every container logging with
// the awslogs driver.
func checkAwslogs(defs []types.ContainerDefinition, fargate bool) error {
	for _, c := range defs {
		lc := c.LogConfiguration
		if lc == nil || lc.LogDriver != types.LogDriverAwslogs {
			continue
		}
		var missing []string
		for _, opt := range []string{"awslogs-region", "awslogs-group"} {
			if _, ok := lc.Options[opt]; !ok {
				missing = append(missing, opt)
			}
		}
		if len(missing) > 0 {
			return clientError("Log driver awslogs requires options: %s", strings.Join(missing, ", "))
		}
		for _, opt := range []string{"awslogs-region", "awslogs-group"} {
			if lc.Options[opt] == "" {
				return clientError("Log driver awslogs option '%s' should not be null or empty.", opt)
			}
		}
		if !logGroupRE.MatchString(lc.Options["awslogs-group"]) {
			return clientError("Log driver awslogs option 'awslogs-group' contains invalid characters.")
		}
		if v, ok := lc.Options["awslogs-create-group"]; ok && v != "true" {
			return clientError("Log driver awslogs option 'awslogs-create-group' should only be set to 'true', else omit option.")
		}
		prefix, hasPrefix := lc.Options["awslogs-stream-prefix"]
		if fargate && prefix == "" {
			return clientError("Fargate requires log configuration options to include awslogs-stream-prefix to support log driver awslogs.")
		}
		// The prefix begins each stream name, prefix/container/task-id,
		// and a log stream name may not contain ":" or "*" (CloudWatch
		// Logs API Reference, CreateLogStream: "The : (colon) and *
		// (asterisk) characters are not allowed."). ECS's wording for this
		// refusal is not known; the message follows its awslogs-group one.
		if hasPrefix && strings.ContainsAny(prefix, ":*") {
			return clientError("Log driver awslogs option 'awslogs-stream-prefix' contains invalid characters.")
		}
	}
	return nil
}
