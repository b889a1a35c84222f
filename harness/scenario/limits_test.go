package scenario_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/egharness/egharness/internal/testutil"
	"github.com/egharness/egharness/translator/resource"
)

// The loader applies its limits to the scenario file itself and to the files it names.
func TestLoaderLimits(t *testing.T) {
	root := t.TempDir()
	path := write(t, root, "routing/s.yaml", validScenario)
	l := loader(t, root)

	l.Limits = resource.Limits{MaxFileSize: 100}
	_, err := l.LoadFile(path)
	if err == nil ||
		err.Error() != path+": the file is over the file size limit of 100 bytes (raise it with --max-file-size)" {
		t.Errorf("file size: %v", err)
	}

	l.Limits = resource.Limits{MaxDepth: 3}
	_, err = l.LoadFile(path)
	// expect (2) > statuses (3) > the first item (4)
	line := testutil.LineOf(t, validScenario, "- object: HTTPRoute/default/app")
	if err == nil ||
		err.Error() != fmt.Sprintf(
			"%s:%d: mappings and sequences nest deeper than the depth limit of 3 levels (raise it with --max-depth)", path,
			line) {
		t.Errorf("depth: %v", err)
	}

	l.Limits = resource.Limits{MaxObjects: 3}
	_, err = l.LoadFile(path)
	line = testutil.LineOf(t, validScenario, "kind: HTTPRoute") - 1
	if err == nil ||
		err.Error() != fmt.Sprintf("%s:%d: object 4 is over the object limit of 3 (raise it with --max-objects)", path,
			line) {
		t.Errorf("objects: %v", err)
	}

	l.Limits = resource.Limits{}
	if _, err := l.LoadFile(path); err != nil {
		t.Errorf("default limits: %v", err)
	}
}

func TestLoaderAliasBombInScenario(t *testing.T) {
	bomb := "x0: &x0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n"
	for i := 1; i <= 9; i++ {
		prev := "*x" + string(rune('0'+i-1))
		bomb += "x" + string(rune('0'+i)) + ": &x" + string(rune('0'+i)) + " [" + strings.TrimSuffix(
			strings.Repeat(prev+", ", 10), ", ") + "]\n"
	}
	start := time.Now()
	path, msgs := loadErr(t, bomb+"name: bomb\ncovers: [RT-01]\nlabels: *x9\n"+resourcesBlock)
	if len(msgs) != 1 ||
		msgs[0] != path+":7: YAML aliases expand past the alias expansion limit of 8 MiB (raise "+
			"it with --max-alias-expansion)" {
		t.Errorf("messages %q", msgs)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("refusing the bomb took %s", d)
	}
}

// A scenario may only name regular files: a pipe would hang the run, a device never end.
func TestResourceFilesMustBeRegular(t *testing.T) {
	root := t.TempDir()
	path := write(t, root, "routing/s.yaml", "name: pipe\ncovers: [RT-01]\nresourcesFile: pipe.resources.yaml\n")
	fifo := filepath.Join(root, "routing", "pipe.resources.yaml")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := loader(t, root).LoadFile(path)
		done <- err
	}()
	select {
	case err := <-done:
		if want := path + ":3: resourcesFile: " + fifo + " is not a regular file"; err == nil || err.Error() != want {
			t.Errorf("error %v, want %s", err, want)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("loading a scenario that names a pipe hangs")
	}
	// A folder is not a resource file either.
	path = write(t, root, "routing/d.yaml",
		"name: dir\ncovers: [RT-01]\nresources: |\n  apiVersion: v1\n  kind: Namespace\n  metadata: {name: x}\n"+
			"include: [.]\n")
	_, err := loader(t, root).LoadFile(path)
	if want := path + ":7: include: " + filepath.Join(root, "routing") + " is not a regular file"; err == nil ||
		err.Error() != want {
		t.Errorf("error %v, want %s", err, want)
	}
}
