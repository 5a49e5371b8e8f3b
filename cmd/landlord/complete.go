package main

import (
	"context"
	"time"

	"github.com/spf13/cobra"

	"github.com/jaxxstorm/landlord/client"
)

// completeTenantNames completes a tenant name argument with the names the
// server knows, each described by its status.
func completeTenantNames(cf *clientFlags) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		c, err := cf.client(cmd)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		ctx, cancel := context.WithTimeout(contextOf(cmd), 3*time.Second)
		defer cancel()
		page, err := c.Tenants().List(ctx, client.ListOptions{NamePrefix: toComplete, PageSize: 200})
		if err != nil {
			cobra.CompDebugln("landlord: list tenants: "+err.Error(), false)
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		var out []cobra.Completion
		for _, t := range page.Tenants {
			out = append(out, cobra.CompletionWithDesc(t.Name, t.Status))
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

// contextOf is the command's context, which Execute sets.
func contextOf(cmd *cobra.Command) context.Context {
	if ctx := cmd.Context(); ctx != nil {
		return ctx
	}
	return context.Background()
}
