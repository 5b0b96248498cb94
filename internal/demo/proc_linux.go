package main

import "syscall"

// childProcAttr puts mooncdc in its own process group (see startMooncdc)
// and asks the kernel to send it SIGTERM should the demo die without
// stopping it, so that no mooncdc is left holding port 9092.
func childProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
}
