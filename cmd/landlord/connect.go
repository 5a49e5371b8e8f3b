package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/jaxxstorm/landlord/client"
)

// clientFlags are the flags of every verb that talks to a server.
type clientFlags struct {
	addr   string
	token  string
	output string
	tls    tlsFlags
}

// addClientFlags adds --addr, --token, the TLS flags and -o to cmd.
func addClientFlags(cmd *cobra.Command) *clientFlags {
	f := &clientFlags{}
	fs := cmd.Flags()
	fs.StringVar(&f.addr, "addr", client.DefaultAddress, "the landlord API's address (env LANDLORD_ADDR)")
	// No default is shown: it would print the token in --help.
	fs.StringVar(&f.token, "token", "", "the API bearer token (env LANDLORD_TOKEN; never shown)")
	f.tls.add(cmd)
	fs.StringVarP(&f.output, "output", "o", "table", "output format: table, json or yaml")
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions([]string{"table", "json", "yaml"}, cobra.ShellCompDirectiveNoFileComp))
	return f
}

// client returns a client from the flags, over LANDLORD_ADDR,
// LANDLORD_TOKEN and the TLS variables, over the defaults, once -o is known to be one it can print.
// Verbs that check more before connecting call checkOutput first.
func (f *clientFlags) client(cmd *cobra.Command) (*client.Client, error) {
	if err := f.checkOutput(); err != nil {
		return nil, err
	}
	cfg := client.DefaultConfig()
	if cmd.Flags().Changed("addr") {
		cfg.Address = f.addr
	}
	if cmd.Flags().Changed("token") {
		cfg.Token = f.token
	}
	f.tls.apply(cmd, &cfg)
	// The address alone first, so that an error names its flag.
	if _, err := client.New(client.Config{Address: cfg.Address}); err != nil {
		return nil, withExitCode(exitUsage, fmt.Errorf("--addr: %w", err))
	}
	c, err := client.New(cfg)
	if err != nil {
		return nil, withExitCode(exitUsage, tlsFlagError(err))
	}
	return c, nil
}

// checkOutput refuses an unknown -o before anything is sent.
func (f *clientFlags) checkOutput() error {
	switch f.output {
	case "table", "json", "yaml":
		return nil
	}
	return withExitCode(exitUsage, fmt.Errorf("-o %q: use table, json or yaml", f.output))
}
