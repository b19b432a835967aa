// autocomp_guard.h — run-time guards around the candidate's kernel (C++17, Linux; no-ops elsewhere).
//
// - task_count(): threads of this process, from /proc/self/task; the harness compares it before and
//   after each call, so work left running after the kernel returns (a detached thread finishing the
//   job outside the timed region) is seen.
// - forbid_processes(): a seccomp filter for the rest of the process's life: creating processes
//   (fork, vfork, clone without CLONE_THREAD), exec, sockets, ptrace and process_vm_* end the process
//   with SIGSYS and a message naming the call. Threads stay allowed. This backs up the sandbox's pid
//   limit and the static check; it is not installed under valgrind, which emulates system calls.
#pragma once

#include <cstddef>
#include <cstring>

#if defined(__linux__)
#include <cerrno>
#include <csignal>
#include <dirent.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace autocomp {
namespace guard {

// Threads of this process now, or -1 where that cannot be known.
inline int task_count() {
#if defined(__linux__)
    DIR* dir = opendir("/proc/self/task");
    if (!dir)
        return -1;
    int n = 0;
    while (const dirent* e = readdir(dir))
        if (e->d_name[0] != '.')
            ++n;
    closedir(dir);
    return n;
#else
    return -1;
#endif
}

#if defined(__linux__) && defined(__x86_64__)
inline void on_sigsys(int, siginfo_t* info, void*) {
    const int nr = info ? info->si_syscall : -1;
    const char* what = nr == SYS_fork || nr == SYS_vfork || nr == SYS_clone ? "process creation (fork/clone)"
                       : nr == SYS_execve || nr == SYS_execveat          ? "exec of another program"
                       : nr == SYS_socket || nr == SYS_connect           ? "network socket"
                       : nr == SYS_ptrace                                ? "ptrace"
                                                                         : "process_vm_readv/writev";
    const char prefix[] = "autocomp harness: FORBIDDEN SYSTEM CALL: the kernel attempted ";
    const char suffix[] = "; candidates may only compute (threads are allowed, processes, programs and sockets are not)\n";
    ssize_t ignored = write(2, prefix, sizeof prefix - 1);
    ignored = write(2, what, std::strlen(what));
    ignored = write(2, suffix, sizeof suffix - 1);
    (void)ignored;
    _exit(3);
}
#endif

// Returns false when the filter could not be installed (not Linux x86-64, or seccomp unavailable).
inline bool forbid_processes() {
#if defined(__linux__) && defined(__x86_64__)
    struct sigaction sa;
    std::memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_sigsys;
    sa.sa_flags = SA_SIGINFO;
    sigaction(SIGSYS, &sa, nullptr);
    constexpr unsigned kThread = CLONE_THREAD;
    struct sock_filter filter[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        // clone3 hides its flags in memory: answer ENOSYS, glibc then falls back to clone for threads.
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 435 /* clone3 */, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_clone, 0, 4),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0])),
        BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, kThread, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_fork, 7, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_vfork, 6, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_execve, 5, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_execveat, 4, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_socket, 3, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_ptrace, 2, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_process_vm_readv, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP),
    };
    struct sock_fprog prog;
    prog.len = static_cast<unsigned short>(sizeof filter / sizeof filter[0]);
    prog.filter = filter;
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
        return false;
    return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) == 0;
#else
    return false;
#endif
}

}  // namespace guard
}  // namespace autocomp
