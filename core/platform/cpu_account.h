#pragma once

#include <QtGlobal>

#include <atomic>
#include <ctime>

namespace autocomp {

// The CPU time one component spends on the threads that call into it, for benchmarks that split a
// process's time between components sharing an event loop (the search engine, its LLM client, the
// evaluation runtime). A Scope counts the calling thread's CPU time while alive (nested scopes count
// once); a Pause inside a Scope leaves out what runs meanwhile, such as the receivers of a signal the
// component emits. One account per Tag type.
//
// Reading a thread's CPU clock is a system call, so accounts count only once a benchmark (or a test)
// has switched them on with CpuAccounting::enable(); in the programs users run they cost a flag test.
struct CpuAccounting
{
    static void enable() { s_on.store(true, std::memory_order_relaxed); }
    static bool enabled() { return s_on.load(std::memory_order_relaxed); }

private:
    static inline std::atomic<bool> s_on{false};
};

template<typename Tag>
class CpuAccount
{
public:
    static qint64 totalNs() { return s_total.load(); }

    class Scope
    {
    public:
        Scope() : m_on(CpuAccounting::enabled())
        {
            if (m_on && t_depth++ == 0)
                t_start = threadNs();
        }
        ~Scope()
        {
            if (m_on && --t_depth == 0)
                s_total += threadNs() - t_start;
        }
        Scope(const Scope &) = delete;
        Scope &operator=(const Scope &) = delete;

    private:
        bool m_on;
    };

    class Pause
    {
    public:
        Pause() : m_depth(t_depth)
        {
            if (m_depth > 0)
                s_total += threadNs() - t_start;
            t_depth = 0;
        }
        ~Pause()
        {
            t_depth = m_depth;
            if (m_depth > 0)
                t_start = threadNs();
        }
        Pause(const Pause &) = delete;
        Pause &operator=(const Pause &) = delete;

    private:
        int m_depth;
    };

    static qint64 threadNs()
    {
        timespec ts{};
        ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
        return qint64(ts.tv_sec) * 1000000000 + ts.tv_nsec;
    }

private:
    static inline std::atomic<qint64> s_total{0};
    static inline thread_local int t_depth = 0;
    static inline thread_local qint64 t_start = 0;
};

} // namespace autocomp
