package main

import "github.com/spf13/cobra"

// pendingExamples are the examples of verbs whose files were being
// changed elsewhere when every verb was given one, by command path. Each
// belongs in its command's Example, and moves there (leaving this map)
// with the next change of its file: TestEveryVerbHasAnExample refuses an
// entry for a command that has an Example of its own.
var pendingExamples = map[string]string{
	"landlord serve": `  landlord serve
  landlord serve --provider docker --database landlord.db
  landlord serve --config landlord.yaml --listen 0.0.0.0:8443 --tls-cert-file server.pem --tls-key-file server-key.pem`,
	"landlord compute providers": `  landlord compute providers
  landlord compute providers -o json`,
	"landlord rollout list": `  landlord rollout list --active
  landlord rollout list --plan standard -o json`,
	"landlord rollout pause": `  landlord rollout pause standard
  landlord rollout pause 0199a3c2-7d4e-7b1a-9c3f-2e5d8a6b4f10`,
	"landlord rollout resume": `  landlord rollout resume standard`,
	"landlord rollout abort": `  landlord rollout abort standard
  landlord rollout abort standard --rollback`,
}

// addPendingExamples gives the commands under root that pendingExamples
// names their example, unless they have one.
func addPendingExamples(root *cobra.Command) {
	for _, c := range root.Commands() {
		if ex, ok := pendingExamples[c.CommandPath()]; ok && c.Example == "" {
			c.Example = ex
		}
		addPendingExamples(c)
	}
}
