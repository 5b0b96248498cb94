//go:build !linux

package main

import "syscall"

// childProcAttr puts mooncdc in its own process group (see startMooncdc).
func childProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
