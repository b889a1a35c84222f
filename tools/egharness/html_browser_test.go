package main

import (
	"context"
	"html"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/egharness/egharness/harness/upgrade"
)

// The upgrade-check HTML page is checked in a real browser: headless Chromium renders the
// sample dump's report at 1280 px with every diff opened, and a probe added to a copy of
// the page (the report itself carries no script) writes into the DOM how wide the page is
// and which elements stick out. No horizontal overflow is allowed, and every finding must be
// on the page. Screenshots are kept in _artifacts/upgrade-report-1280.png (v1.8 → v1.9) and
// _artifacts/upgrade-report-v1.10-1280.png (v1.9 → v1.10-preview).
//
// Chromium is Debian's `chromium` (.ci/run installs it); where it is absent the test skips.
func TestUpgradeReportInBrowser(t *testing.T) {
	browser := findChromium()
	if browser == "" {
		t.Skip("no chromium on PATH (apt-get install -y chromium): the HTML report is not checked in a browser")
	}
	for _, tc := range []struct{ from, to, shot string }{
		{"v1.8", "v1.9", "upgrade-report-1280.png"},
		{"v1.9", "v1.10-preview", "upgrade-report-v1.10-1280.png"},
	} {
		t.Run(tc.from+"-"+tc.to, func(t *testing.T) { checkReportInBrowser(t, browser, tc.from, tc.to, tc.shot) })
	}
}

func checkReportInBrowser(t *testing.T, browser, from, to, shotName string) {
	code, page, msg := execute(t, "", "upgrade-check", "--from", from, "--to", to, "-f", sampleDump, "-o", "html")
	if code != exitFail {
		t.Fatalf("exit %d (%s)", code, msg)
	}
	_, js, _ := execute(t, "", "upgrade-check", "--from", from, "--to", to, "-f", sampleDump, "-o", "json")
	doc := upgradeFindings(t, js)

	const width = 1280
	dir := t.TempDir()
	probe := `<script>
for (const d of document.querySelectorAll('details')) d.open = true;
const vw = document.documentElement.clientWidth;
const wide = [];
for (const el of document.body.querySelectorAll('*')) {
  const r = el.getBoundingClientRect();
  if (r.right > vw + 1 && wide.length < 5)
    wide.push(el.tagName + '.' + el.className + ' right=' + Math.round(r.right) +
      ' "' + (el.textContent || '').slice(0, 60) + '"');
}
const out = document.createElement('pre');
out.id = 'probe';
out.textContent = 'scrollWidth=' + document.documentElement.scrollWidth + ' clientWidth=' + vw + '\n' + wide.join('\n');
document.body.appendChild(out);
</script>`
	probed := strings.Replace(page, "</body>", probe+"</body>", 1)
	path := filepath.Join(dir, "report.html")
	if err := os.WriteFile(path, []byte(probed), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--hide-scrollbars",
		"--window-size=" + strconv.Itoa(width) + ",900", "--user-data-dir=" + filepath.Join(dir, "profile")}
	dom := runChromium(t, browser, append(args, "--dump-dom", "file://"+path)...)

	m := regexp.MustCompile(`scrollWidth=(\d+) clientWidth=(\d+)([^<]*)`).FindStringSubmatch(dom)
	if m == nil {
		t.Fatalf("the probe did not run; the DOM:\n%.2000s", dom)
	}
	sw, _ := strconv.Atoi(m[1])
	cw, _ := strconv.Atoi(m[2])
	if cw < width-40 || cw > width {
		t.Errorf("the viewport is %d px wide, want about %d", cw, width)
	}
	if sw > cw {
		t.Errorf("the page overflows sideways at %d px: scrollWidth %d > clientWidth %d; wider elements:\n%s", width, sw, cw,
			html.UnescapeString(m[3]))
	}
	text := html.UnescapeString(dom)
	for _, f := range doc.Findings {
		if !strings.Contains(text, upgrade.HumanSummary(f.Summary)) {
			t.Errorf("finding not on the page: %s %s", f.ID, f.Summary)
		}
	}
	if n := strings.Count(dom, `class="finding `); n != len(doc.Findings) {
		t.Errorf("%d finding rows on the page, want %d", n, len(doc.Findings))
	}

	// The screenshot of the page as a user opens it (diffs closed), kept for a person.
	art := filepath.Join("..", "..", "_artifacts")
	if err := os.MkdirAll(art, 0o755); err != nil {
		t.Fatal(err)
	}
	plain := filepath.Join(dir, "plain.html")
	if err := os.WriteFile(plain, []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	shot, err := filepath.Abs(filepath.Join(art, shotName))
	if err != nil {
		t.Fatal(err)
	}
	args[len(args)-2] = "--window-size=" + strconv.Itoa(width) + ",2400"
	runChromium(t, browser, append(args, "--screenshot="+shot, "file://"+plain)...)
	if info, err := os.Stat(shot); err != nil || info.Size() == 0 {
		t.Errorf("no screenshot at %s: %v", shot, err)
	} else {
		t.Logf("screenshot: %s", shot)
	}
}

func findChromium() string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "headless_shell"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

func runChromium(t *testing.T, browser string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, browser, args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v\n%s", browser, err, stderr.String())
	}
	return string(out)
}
