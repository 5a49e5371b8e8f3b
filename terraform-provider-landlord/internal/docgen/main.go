package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
)

func main() {
	dir := flag.String("dir", ".", "the provider module's root: examples are read from `dir`/examples, pages written to dir/docs")
	flag.Parse()
	log.SetFlags(0)
	log.SetPrefix("docgen: ")
	files, err := render(context.Background(), *dir)
	if err != nil {
		log.Fatal(err)
	}
	changed, err := write(*dir, files)
	if err != nil {
		log.Fatal(err)
	}
	for _, c := range changed {
		fmt.Fprintln(os.Stderr, "docgen:", c)
	}
}
