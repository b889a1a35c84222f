package xdsserver

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime/debug"
	"time"

	"github.com/fsnotify/fsnotify"
)

// Debounce is how long a watcher waits after the last change before it reloads: an editor's
// save is often several events (truncate, write, rename), and one reload is enough.
const Debounce = 150 * time.Millisecond

// Watch reloads src into s whenever one of the files it was read from changes, until ctx
// ends. It watches the files' folders rather than the files, because editors and tools
// often save by writing a new file and renaming it over the old one, which ends a watch on
// the file itself. A load that fails is recorded (RELOAD_ERROR) and the previous snapshot
// stays served. files are the files of the first load; each reload may change them.
//
// inotify (through fsnotify) rather than polling modification times: changes are seen at
// once, nothing runs while nothing changes, and two saves within the file system's
// timestamp resolution are not missed.
func Watch(ctx context.Context, s *Server, src Source, files []string) error {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("watching files: %w", err)
	}
	defer w.Close()
	watched := map[string]bool{} // files, absolute
	dirs := map[string]bool{}
	setFiles := func(fs []string) error {
		watched = map[string]bool{}
		for _, f := range fs {
			abs, err := filepath.Abs(f)
			if err != nil {
				return err
			}
			watched[abs] = true
			dir := filepath.Dir(abs)
			if !dirs[dir] {
				if err := w.Add(dir); err != nil {
					return fmt.Errorf("watching %s: %w", dir, err)
				}
				dirs[dir] = true
			}
		}
		return nil
	}
	if err := setFiles(files); err != nil {
		return err
	}
	var timer <-chan time.Time
	for {
		select {
		case <-ctx.Done():
			return nil
		case err, ok := <-w.Errors:
			if !ok {
				return nil
			}
			s.ReloadFailed("file watcher", err)
		case ev, ok := <-w.Events:
			if !ok {
				return nil
			}
			abs, _ := filepath.Abs(ev.Name)
			// Chmod too: `touch` changes only the file's times, and a user who touches the
			// file asks for a reload.
			if watched[abs] && ev.Op&(fsnotify.Write|fsnotify.Create|fsnotify.Rename|fsnotify.Remove|fsnotify.Chmod) != 0 {
				timer = time.After(Debounce)
			}
		case <-timer:
			timer = nil
			l, err := src.Load()
			if err != nil {
				s.ReloadFailed("reload", err)
				continue
			}
			_, _, err = s.Update(ctx, l)
			// A reload of a large file leaves a heap of garbage the size of a translation;
			// handing it back now keeps a long-running serve at the size of one.
			debug.FreeOSMemory()
			if err != nil {
				continue // recorded by Update
			}
			if err := setFiles(l.Files); err != nil {
				s.ReloadFailed("file watcher", err)
			}
		}
	}
}
