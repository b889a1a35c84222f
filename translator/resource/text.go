package resource

import (
	"bytes"
	"fmt"
	"os"
	"unicode/utf8"

	"golang.org/x/text/encoding/unicode"
)

// Byte-order marks of the encodings Text reads.
var (
	bomUTF8    = []byte{0xEF, 0xBB, 0xBF}
	bomUTF16LE = []byte{0xFF, 0xFE}
	bomUTF16BE = []byte{0xFE, 0xFF}
)

// Text turns the bytes of an input file into UTF-8 text without a byte-order mark: UTF-8
// with or without a BOM, and UTF-16 (little or big endian) with a BOM, which is what
// PowerShell 5's `>` writes, are read; anything else (UTF-16 without a BOM, UTF-32, a
// binary file, Latin-1) is refused with an error naming file and, where it helps, the line.
// Every reader of user input (ReadFile, ReadAll) calls it, so no command reads one object
// out of a file it did not understand.
func Text(file string, data []byte) ([]byte, error) {
	switch {
	case bytes.HasPrefix(data, []byte{0xFF, 0xFE, 0, 0}) || bytes.HasPrefix(data, []byte{0, 0, 0xFE, 0xFF}):
		return nil, fmt.Errorf("%s: the file is UTF-32 text; save it as UTF-8 (or UTF-16) and try again", file)
	case bytes.HasPrefix(data, bomUTF8):
		data = data[len(bomUTF8):]
	case bytes.HasPrefix(data, bomUTF16LE), bytes.HasPrefix(data, bomUTF16BE):
		if len(data)%2 != 0 {
			return nil, fmt.Errorf(
				"%s: the file starts with a UTF-16 byte-order mark but has an odd number of bytes (it is cut short, or not UTF-16)",
				file)
		}
		// The decoder reads and drops the BOM, whichever order it gives.
		out, err := unicode.UTF16(unicode.LittleEndian, unicode.ExpectBOM).NewDecoder().Bytes(data)
		if err != nil {
			return nil, fmt.Errorf("%s: reading UTF-16: %v", file, err)
		}
		data = out
	}
	// A BOM that starts a later part (files concatenated with cat) is left to the YAML
	// reader, which allows one at the start of every document.
	nul, bad := bytes.IndexByte(data, 0), -1
	if !utf8.Valid(data) {
		bad = firstInvalid(data)
	}
	lineAt := func(i int) int { return 1 + bytes.Count(data[:i], []byte{'\n'}) }
	switch {
	case nul >= 0 && utf16Like(data):
		return nil, fmt.Errorf(
			"%s: the file looks like UTF-16 text without a byte-order mark; save it as UTF-8 (or "+
				"UTF-16 with a BOM) and try again",
			file)
	case nul >= 0 && (bad < 0 || nul < bad):
		return nil, fmt.Errorf("%s:%d: a NUL byte: this is not a text file (YAML or JSON in UTF-8 or UTF-16)", file,
			lineAt(nul))
	case bad >= 0:
		return nil, fmt.Errorf(
			"%s:%d: byte 0x%02X at offset %d is not UTF-8: this is not UTF-8 or UTF-16 text (a binary file, or Latin-1?); "+
				"save it as UTF-8 and try again",
			file, lineAt(bad), data[bad], bad)
	}
	return data, nil
}

// utf16Like reports a file whose every other byte is NUL in its first bytes: ASCII text in
// UTF-16, without the BOM that says which order.
func utf16Like(data []byte) bool {
	n := min(len(data), 512) &^ 1
	if n < 4 {
		return false
	}
	even, odd := 0, 0
	for i := 0; i < n; i += 2 {
		if data[i] == 0 {
			even++
		}
		if data[i+1] == 0 {
			odd++
		}
	}
	half := n / 2
	return even*10 >= half*9 || odd*10 >= half*9
}

func firstInvalid(data []byte) int {
	for i := 0; i < len(data); {
		r, size := utf8.DecodeRune(data[i:])
		if r == utf8.RuneError && size <= 1 {
			return i
		}
		i += size
	}
	return len(data)
}

// checkRegular refuses a path that is not a regular file, before it is opened: opening a
// named pipe blocks until a writer comes, and a device may never end.
func checkRegular(file string) error {
	info, err := os.Stat(file)
	if err != nil {
		return err
	}
	return regular(file, info)
}

func regular(file string, info os.FileInfo) error {
	m := info.Mode()
	var what string
	switch {
	case m.IsRegular():
		return nil
	case m.IsDir():
		what = "a directory"
	case m&os.ModeNamedPipe != 0:
		what = "a named pipe (FIFO)"
	case m&os.ModeSocket != 0:
		what = "a socket"
	case m&os.ModeCharDevice != 0:
		what = "a character device"
	case m&os.ModeDevice != 0:
		what = "a device"
	default:
		what = "not a regular file"
	}
	if m.IsDir() {
		return fmt.Errorf("%s: is %s; only regular files are read (name a file in it)", file, what)
	}
	return fmt.Errorf(
		"%s: is %s; only regular files are read (to read a pipe or a command's output, give it on standard input with -f -)",
		file, what)
}
