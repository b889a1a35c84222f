package resource

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/egharness/egharness/internal/yamlpos"
)

// Defaults of Limits.
const (
	// A cluster dump of 50,000 HTTPRoutes with their Gateways, policies, Services and
	// EndpointSlices (about four objects a route, 1 KB each) fits both defaults.
	DefaultMaxFileSize       int64 = 128 << 20 // 128 MiB
	DefaultMaxObjects              = 250000
	DefaultMaxDepth                = 100
	DefaultMaxAliasExpansion int64 = 8 << 20 // 8 MiB
)

// Limits bound what one input file may hold, so that a hostile or broken file (a cluster
// dump, a vendor's output) fails with a clear error instead of exhausting memory. A zero
// field means its default; a negative one, no limit.
type Limits struct {
	// MaxFileSize is the largest file read, in bytes (default 128 MiB; --max-file-size).
	MaxFileSize int64
	// MaxObjects is the most documents (objects, skipped ones included) in one file
	// (default 250000; --max-objects).
	MaxObjects int
	// MaxDepth is the deepest nesting of mappings and sequences in one document
	// (default 100; --max-depth).
	MaxDepth int
	// MaxAliasExpansion is how many bytes (measured as JSON) YAML aliases may add to a file
	// once expanded: an alias counts the whole node it names, so "billion laughs" stop
	// here (default 8 MiB; --max-alias-expansion).
	MaxAliasExpansion int64
}

// Resolved returns l with each zero field set to its default.
func (l Limits) Resolved() Limits {
	if l.MaxFileSize == 0 {
		l.MaxFileSize = DefaultMaxFileSize
	}
	if l.MaxObjects == 0 {
		l.MaxObjects = DefaultMaxObjects
	}
	if l.MaxDepth == 0 {
		l.MaxDepth = DefaultMaxDepth
	}
	if l.MaxAliasExpansion == 0 {
		l.MaxAliasExpansion = DefaultMaxAliasExpansion
	}
	return l
}

// LimitError is input over one of the Limits. Its message names the file (and line), the
// limit and the flag that raises it.
type LimitError struct {
	File string
	Line int // 0: the file as a whole
	// Limit is the limit's name: "file size", "object", "depth" or "alias expansion".
	Limit string
	// Max is the limit's value, as printed ("32 MiB", "20000 objects").
	Max string
	// What says what is over it, ending with the comparison: "the file is over".
	What string
	// Flag is the command-line flag that raises it; Field, the Limits field.
	Flag, Field string
}

func (e *LimitError) Error() string {
	where := e.File
	if e.Line > 0 {
		where = fmt.Sprintf("%s:%d", e.File, e.Line)
	}
	return fmt.Sprintf("%s: %s the %s limit of %s (raise it with %s)", where, e.What, e.Limit, e.Max, e.Flag)
}

func fileSizeError(file string, max int64) *LimitError {
	return &LimitError{File: file, Limit: "file size", Max: FormatSize(max), What: "the file is over",
		Flag: "--max-file-size", Field: "MaxFileSize"}
}

func objectsError(file string, line, max int) *LimitError {
	return &LimitError{File: file, Line: line, Limit: "object", Max: fmt.Sprint(max),
		What: fmt.Sprintf("object %d is over", max+1), Flag: "--max-objects", Field: "MaxObjects"}
}

func depthError(file string, line, max int) *LimitError {
	return &LimitError{File: file, Line: line, Limit: "depth", Max: plural(max, "level"),
		What: "mappings and sequences nest deeper than", Flag: "--max-depth", Field: "MaxDepth"}
}

func aliasError(file string, line int, max int64) *LimitError {
	return &LimitError{File: file, Line: line, Limit: "alias expansion", Max: FormatSize(max),
		What: "YAML aliases expand past", Flag: "--max-alias-expansion", Field: "MaxAliasExpansion"}
}

func plural(n int, unit string) string {
	if n == 1 {
		return "1 " + unit
	}
	return fmt.Sprintf("%d %ss", n, unit)
}

// FormatSize prints a byte count the way the size flags read it: "32 MiB", "512 KiB",
// "1000 bytes".
func FormatSize(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	case n == 1:
		return "1 byte"
	}
	return fmt.Sprintf("%d bytes", n)
}

// ParseSize reads a byte count: a number of bytes, or a number with a unit (KiB, MiB, GiB;
// Ki, Mi, Gi; KB, MB, GB in powers of ten; B). Spaces between number and unit are allowed.
// A negative count means no limit.
func ParseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	i := 0
	if i < len(t) && t[i] == '-' {
		i++
	}
	for i < len(t) && t[i] >= '0' && t[i] <= '9' {
		i++
	}
	num, unit := t[:i], strings.TrimSpace(t[i:])
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("size %q: want a number of bytes, optionally with a unit (32MiB, 512KiB, 1GiB)", s)
	}
	mult := map[string]int64{"": 1, "b": 1, "k": 1 << 10, "ki": 1 << 10, "kib": 1 << 10, "kb": 1000,
		"m": 1 << 20, "mi": 1 << 20, "mib": 1 << 20, "mb": 1000 * 1000,
		"g": 1 << 30, "gi": 1 << 30, "gib": 1 << 30, "gb": 1000 * 1000 * 1000}[strings.ToLower(unit)]
	if mult == 0 {
		return 0, fmt.Errorf("size %q: unknown unit %q (use KiB, MiB or GiB)", s, unit)
	}
	if n > 0 && n > (1<<62)/mult {
		return 0, fmt.Errorf("size %q is too large", s)
	}
	return n * mult, nil
}

// ReadFile reads file, or at most the file size limit of it: a larger file is refused with
// a *LimitError rather than read into memory. Only regular files are read (a named pipe, a
// device or a directory is refused with a message), and the bytes are decoded as Text.
func ReadFile(file string, l Limits) ([]byte, error) {
	if err := checkRegular(file); err != nil {
		return nil, err
	}
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	l = l.Resolved()
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if err := regular(file, info); err != nil {
		return nil, err // replaced between the check and the open
	}
	if l.MaxFileSize >= 0 && info.Size() > l.MaxFileSize {
		return nil, fileSizeError(file, l.MaxFileSize)
	}
	return ReadAll(file, f, l)
}

// ReadAll reads r (standard input, say), named file in errors, up to the file size limit,
// and decodes it as Text (UTF-8 or UTF-16 with a BOM; binary refused).
func ReadAll(file string, r io.Reader, l Limits) ([]byte, error) {
	l = l.Resolved()
	var data []byte
	var err error
	if l.MaxFileSize < 0 {
		data, err = io.ReadAll(r)
	} else {
		data, err = io.ReadAll(io.LimitReader(r, l.MaxFileSize+1))
		if err == nil && int64(len(data)) > l.MaxFileSize {
			return nil, fileSizeError(file, l.MaxFileSize)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return Text(file, data)
}

// CheckTree measures a parsed YAML file (a scenario, say) against the depth and alias
// expansion limits before anything expands it; errors name file and line.
func CheckTree(file string, root *yaml.Node, l Limits) error {
	l = l.Resolved()
	_, err := yamlpos.CheckNode(root, yamlpos.Limits{MaxDepth: l.MaxDepth, MaxAliasBytes: l.MaxAliasExpansion})
	return limitErr(file, 0, l, err)
}

// limitErr words a yamlpos limit or alias problem for file; offset is added to lines.
func limitErr(file string, offset int, l Limits, err error) error {
	if err == nil {
		return nil
	}
	var le *yamlpos.LimitError
	if errors.As(err, &le) {
		line := le.Line
		if line > 0 {
			line += offset
		}
		if le.Kind == yamlpos.LimitDepth {
			return depthError(file, line, l.MaxDepth)
		}
		return aliasError(file, line, l.MaxAliasExpansion)
	}
	var pe *yamlpos.Error
	if errors.As(err, &pe) && pe.Line > 0 {
		return fmt.Errorf("%s:%d: %s", file, pe.Line+offset, pe.Msg)
	}
	return fmt.Errorf("%s: %v", file, err)
}
