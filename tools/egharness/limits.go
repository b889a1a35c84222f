package main

import (
	"github.com/spf13/pflag"

	"github.com/egharness/egharness/translator/resource"
)

// addLimitFlags registers the input limits on f; the returned value holds what was set.
func addLimitFlags(f *pflag.FlagSet) *resource.Limits {
	l := resource.Limits{}.Resolved()
	f.Var((*sizeFlag)(&l.MaxFileSize), "max-file-size", "largest input file read (e.g. 64MiB; -1: no limit)")
	f.IntVar(&l.MaxObjects, "max-objects", l.MaxObjects, "most objects (YAML documents) in one file (-1: no limit)")
	f.IntVar(&l.MaxDepth, "max-depth", l.MaxDepth,
		"deepest nesting of mappings and sequences in one document (-1: no limit)")
	f.Var((*sizeFlag)(&l.MaxAliasExpansion), "max-alias-expansion",
		"most bytes YAML aliases may add to a file once expanded (-1: no limit)")
	return &l
}

// sizeFlag is a byte count written as 32MiB, 512KiB or a number of bytes.
type sizeFlag int64

func (s *sizeFlag) String() string {
	if *s < 0 {
		return "-1"
	}
	return resource.FormatSize(int64(*s))
}

func (s *sizeFlag) Set(v string) error {
	n, err := resource.ParseSize(v)
	if err != nil {
		return err
	}
	if n < 0 {
		n = -1
	}
	*s = sizeFlag(n)
	return nil
}

func (s *sizeFlag) Type() string { return "size" }
