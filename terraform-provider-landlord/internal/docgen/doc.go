// Command docgen writes the provider's documentation in the layout the
// Terraform Registry reads (docs/index.md, docs/resources/<name>.md,
// docs/data-sources/<name>.md), from the provider's schemas and the
// examples under examples/. go generate ./... runs it from the module's
// root (generate.go).
//
// It does the job of tfplugindocs without what tfplugindocs needs: a
// terraform binary, downloaded, to read the schemas. docgen reads them
// in process, through the Plugin Framework's public interfaces, and
// renders them as tfplugindocs does, so the pages read the same.
package main
