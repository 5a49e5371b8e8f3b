package main

import (
	"context"
	"fmt"
	"strings"
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

// completePlanNames completes a plan name, a flag's value, with the
// server's plans, each described by its provider and current version;
// firstArg(completePlanNames(cf)) completes a plan argument.
func completePlanNames(cf *clientFlags) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		c, err := cf.client(cmd)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		ctx, cancel := context.WithTimeout(contextOf(cmd), 3*time.Second)
		defer cancel()
		list, err := c.Plans().List(ctx)
		if err != nil {
			cobra.CompDebugln("landlord: list plans: "+err.Error(), false)
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		var out []cobra.Completion
		for _, p := range list.Plans {
			if strings.HasPrefix(p.Name, toComplete) {
				out = append(out, cobra.CompletionWithDesc(p.Name, fmt.Sprintf("%s, version %d", p.Provider, p.CurrentVersion)))
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

// completeRolloutIDs completes a rollout id argument with the server's
// rollouts, newest first, each described by its plan, versions and state;
// with active, only those that have not finished.
func completeRolloutIDs(cf *clientFlags, active bool) cobra.CompletionFunc {
	return firstArg(func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		c, err := cf.client(cmd)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		ctx, cancel := context.WithTimeout(contextOf(cmd), 3*time.Second)
		defer cancel()
		list, err := c.Rollouts().List(ctx, client.RolloutListOptions{Active: active})
		if err != nil {
			cobra.CompDebugln("landlord: list rollouts: "+err.Error(), false)
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		var out []cobra.Completion
		for _, ro := range list.Rollouts {
			if strings.HasPrefix(ro.ID, toComplete) {
				out = append(out, cobra.CompletionWithDesc(ro.ID, fmt.Sprintf("%s %s, %s", ro.Plan, versionsCell(ro.FromVersion, ro.ToVersion), ro.State)))
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	})
}

// firstArg completes the first argument with f, and nothing after it.
func firstArg(f cobra.CompletionFunc) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		return f(cmd, args, toComplete)
	}
}

// completeSubscriptionNames completes a subscription name, the first
// argument, with the server's subscriptions, each described by its URL and
// whether it is enabled.
func completeSubscriptionNames(cf *clientFlags) cobra.CompletionFunc {
	return firstArg(func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		c, err := cf.client(cmd)
		if err != nil {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		ctx, cancel := context.WithTimeout(contextOf(cmd), 3*time.Second)
		defer cancel()
		list, err := c.Subscriptions().List(ctx)
		if err != nil {
			cobra.CompDebugln("landlord: list subscriptions: "+err.Error(), false)
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		var out []cobra.Completion
		for _, s := range list.Subscriptions {
			if strings.HasPrefix(s.Name, toComplete) {
				out = append(out, cobra.CompletionWithDesc(s.Name, s.URL+", "+enabledText(s)))
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	})
}

// completeEventTypes completes --type with the event types, and a
// comma-separated list of them one type at a time.
func completeEventTypes(_ *cobra.Command, _ []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	given, last := "", toComplete
	if i := strings.LastIndex(toComplete, ","); i >= 0 {
		given, last = toComplete[:i+1], toComplete[i+1:]
	}
	var out []cobra.Completion
	for _, t := range client.EventTypes() {
		if strings.HasPrefix(t, last) && !strings.Contains(","+given, ","+t+",") {
			out = append(out, given+t)
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}
