package policy

import "testing"

func TestRedirectPath(t *testing.T) {
	for in, want := range map[string]string{
		"https://sso.example.com/auth/callback":               "/auth/callback",
		"%REQ(x-forwarded-proto)%://%REQ(:authority)%/cb?x=1": "/cb?x=1",
		"https://sso.example.com/":                            "",
		"https://sso.example.com":                             "",
		"ftp://sso.example.com/cb":                            "",
		"sso.example.com/cb":                                  "",
	} {
		got, err := redirectPath(in)
		if want == "" && err == nil {
			t.Errorf("redirectPath(%q) = %q, want an error", in, got)
		}
		if want != "" && (err != nil || got != want) {
			t.Errorf("redirectPath(%q) = %q, %v, want %q", in, got, err, want)
		}
	}
}

func TestCookieSuffixIsFNV32aOfUID(t *testing.T) {
	// The uid and suffix pair of EG's own OIDC test data.
	if got := digest32("08335a80-83ba-4592-888f-6ac0bba44ce4"); got != "5f93c2e4" {
		t.Errorf("digest32 = %s", got)
	}
	if got := digest32(""); got != "811c9dc5" {
		t.Errorf("digest32 of no uid = %s", got)
	}
}
