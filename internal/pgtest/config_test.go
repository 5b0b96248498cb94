package pgtest

import (
	"strings"
	"testing"
)

func TestRenderConfigQuotesRawValuesInNameOrder(t *testing.T) {
	got, err := renderConfig(map[string]string{
		"wal_level":               "logical",
		"unix_socket_directories": "",
		"application_name":        `it's a\b`,
		"search_path":             "\"$user\", public",
	})
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Join([]string{
		"# Written by pgtest on every start; edits are lost.",
		`application_name = 'it''s a\\b'`,
		`search_path = '"$user", public'`,
		`unix_socket_directories = ''`,
		`wal_level = 'logical'`,
		"",
	}, "\n")
	if string(got) != want {
		t.Fatalf("renderConfig:\n%s\nwant:\n%s", got, want)
	}
}

func TestRenderConfigRejectsBadNames(t *testing.T) {
	for _, name := range []string{"", "wal level", "x = 1\nfsync", "a'b"} {
		if _, err := renderConfig(map[string]string{name: "v"}); err == nil {
			t.Errorf("renderConfig accepted setting name %q", name)
		}
	}
}

func TestSettingsOverrideDefaultsButNotPort(t *testing.T) {
	s, err := settings(5555, map[string]string{"fsync": "on", "work_mem": "8MB"})
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{"fsync": "on", "work_mem": "8MB", "port": "5555", "wal_level": "logical"} {
		if s[k] != want {
			t.Errorf("%s = %q, want %q", k, s[k], want)
		}
	}
	if _, err := settings(5555, map[string]string{"port": "1"}); err == nil {
		t.Error("settings accepted a port override")
	}
}
