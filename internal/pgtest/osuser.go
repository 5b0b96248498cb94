package pgtest

import (
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
)

// serverUser is the OS identity that initdb, pg_ctl, the server and
// Command's programs run as. Postgres refuses to run as root, so a root
// process switches to the OS user "postgres"; any other process runs them as
// itself.
type serverUser struct {
	switchTo bool // run children with uid/gid instead of our own identity
	name     string
	uid, gid uint32
	gids     []uint32 // all groups of the user, for the search check
	home     string
}

func lookupServerUser() (serverUser, error) {
	if os.Geteuid() != 0 {
		return serverUser{uid: uint32(os.Geteuid()), gid: uint32(os.Getegid())}, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return serverUser{}, fmt.Errorf("running as root, and Postgres refuses to run as root, but there is no OS user postgres to run it as (%v); the postgresql package creates it: %s", err, installHint)
	}
	su := serverUser{switchTo: true, name: u.Username, home: u.HomeDir}
	uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
	gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
	if err1 != nil || err2 != nil {
		return serverUser{}, fmt.Errorf("OS user postgres has non-numeric uid %q or gid %q", u.Uid, u.Gid)
	}
	su.uid, su.gid = uint32(uid), uint32(gid)
	groups, _ := u.GroupIds()
	for _, g := range groups {
		if n, err := strconv.ParseUint(g, 10, 32); err == nil {
			su.gids = append(su.gids, uint32(n))
		}
	}
	if len(su.gids) == 0 {
		su.gids = []uint32{su.gid}
	}
	return su, nil
}

// apply makes cmd run as the server user. Setting Credential without Groups
// also drops root's supplementary groups.
func (u serverUser) apply(cmd *exec.Cmd) {
	if !u.switchTo {
		return
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Credential: &syscall.Credential{Uid: u.uid, Gid: u.gid},
	}
}

// chown gives path to the server user; a no-op when we are that user.
func (u serverUser) chown(path string) error {
	if !u.switchTo {
		return nil
	}
	return os.Chown(path, int(u.uid), int(u.gid))
}

// checkSearchable reports an error unless the server user may traverse dir
// and every directory above it. Directories from t.TempDir and os.MkdirTemp
// are mode 0700 and owned by root, which the postgres user cannot enter;
// without this check initdb fails with a bare "Permission denied".
func (u serverUser) checkSearchable(dir string) error {
	if !u.switchTo {
		return nil
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	for p := abs; ; p = filepath.Dir(p) {
		fi, err := os.Stat(p)
		if err != nil {
			return err
		}
		if !u.canSearch(fi) {
			return fmt.Errorf("OS user %s cannot enter %s (mode %#o, needed to reach %s); use a directory that every user can traverse (mode 0755), or leave Options.Dir empty", u.name, p, fi.Mode().Perm(), abs)
		}
		if p == filepath.Dir(p) {
			return nil
		}
	}
}

func (u serverUser) canSearch(fi os.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return true // cannot tell; let initdb report it
	}
	perm := fi.Mode().Perm()
	switch {
	case st.Uid == u.uid:
		return perm&0o100 != 0
	case slices.Contains(u.gids, st.Gid):
		return perm&0o010 != 0
	default:
		return perm&0o001 != 0
	}
}

// env returns our environment without PG* variables (a stray PGDATA, PGPORT
// or PGOPTIONS would redirect initdb, pg_ctl or psql), with HOME pointing
// at the server user's home when we switch users, plus extra.
func (u serverUser) env(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "PG") {
			continue
		}
		if u.switchTo && (strings.HasPrefix(kv, "HOME=") || strings.HasPrefix(kv, "USER=") || strings.HasPrefix(kv, "LOGNAME=")) {
			continue
		}
		env = append(env, kv)
	}
	if u.switchTo {
		env = append(env, "HOME="+u.home, "USER="+u.name, "LOGNAME="+u.name)
	}
	return append(env, extra...)
}
