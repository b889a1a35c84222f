package resource

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"strings"
)

// Splitting an input into documents: YAML streams at their --- separators and JSON values
// one after another, each with the line it starts at.

// unixBreaks turns CRLF and lone CR line breaks into LF, so that the documents' lines,
// counted here, and the YAML parser's lines, which count a lone CR too, agree. YAML reads
// every such break in content as LF anyway.
func unixBreaks(data []byte) []byte {
	if bytes.IndexByte(data, '\r') < 0 {
		return data
	}
	out := make([]byte, 0, len(data))
	for i := 0; i < len(data); i++ {
		if data[i] != '\r' {
			out = append(out, data[i])
			continue
		}
		out = append(out, '\n')
		if i+1 < len(data) && data[i+1] == '\n' {
			i++
		}
	}
	return out
}

type document struct {
	text []byte
	line int // line of the document's first line, 1-based
}

// splitStream cuts a file into documents: a stream of JSON values written one after
// another (`kubectl get … -o json` per kind, appended) into one document per value, like a
// stream of YAML documents; anything else at "---" lines (splitDocuments). Where the JSON
// stream stops being JSON (a syntax error, or YAML after a "---"), the rest is cut as YAML,
// so the error names its own line.
func splitStream(data []byte) []document {
	start := skipSpace(data, 0)
	if start == len(data) || data[start] != '{' {
		return splitDocuments(data)
	}
	var docs []document
	dec := json.NewDecoder(bytes.NewReader(data))
	line, at := 1, 0 // line of byte offset at
	lineOf := func(off int) int {
		line += bytes.Count(data[at:off], []byte{'\n'})
		at = off
		return line
	}
	for {
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			if err == io.EOF {
				return docs
			}
			break
		}
		end := int(dec.InputOffset())
		docs = append(docs, document{text: data[start:end], line: lineOf(start)})
		start = skipSpace(data, end)
		if start == len(data) {
			return docs
		}
		if data[start] != '{' {
			break
		}
	}
	if len(docs) == 0 {
		return splitDocuments(data)
	}
	// The rest as YAML documents, numbered from its line.
	first := lineOf(start)
	for _, d := range splitDocuments(data[start:]) {
		d.line += first - 1
		docs = append(docs, d)
	}
	return docs
}

func skipSpace(data []byte, i int) int {
	for i < len(data) && (data[i] == ' ' || data[i] == '\t' || data[i] == '\n' || data[i] == '\r') {
		i++
	}
	return i
}

// splitDocuments cuts at "---" separator lines, remembering where each document starts.
// Blank and comment lines before a document's first content line are left out, so that a
// document's line (the line messages about the object name) is its first real line.
func splitDocuments(data []byte) []document {
	var docs []document
	var cur bytes.Buffer
	start := 1
	n := 0
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64*1024), len(data)+1)
	for sc.Scan() {
		n++
		l := sc.Text()
		if l == "---" || strings.HasPrefix(l, "--- ") || strings.HasPrefix(l, "---\t") {
			docs = append(docs, document{text: append([]byte(nil), cur.Bytes()...), line: start})
			cur.Reset()
			start = n + 1
			continue
		}
		if cur.Len() == 0 {
			if t := strings.TrimSpace(l); t == "" || strings.HasPrefix(t, "#") {
				start = n + 1
				continue
			}
		}
		cur.WriteString(l)
		cur.WriteByte('\n')
	}
	docs = append(docs, document{text: cur.Bytes(), line: start})
	return docs
}

func isBlank(b []byte) bool {
	for _, l := range strings.Split(string(b), "\n") {
		l = strings.TrimSpace(l)
		if l != "" && !strings.HasPrefix(l, "#") {
			return false
		}
	}
	return true
}
