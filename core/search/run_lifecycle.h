#pragma once

#include <QString>

namespace autocomp {

// Where a run driven by a SearchEngine stands, in one value, and the only ways it may move on:
//
//   Running  -> Pausing -> Paused -> Running     pause(): in-flight work finishes, new work waits;
//       |          |          |                    resumeWork() (from Pausing too) runs what waited
//       +----------+----------+-> Draining        a budget ran out at the end of an iteration: nothing new
//       |                              |            starts, the run ends with the beam selection
//       +------------------------------+-> Stopping   stop()/suspend(): in-flight work is cancelled and its
//       |                                     |         outcome not acted on
//       +-------------------------------------+-> Halted   a store write failed, or another process took the
//       |                                                   lease: nothing more is acted on or written
//       +---------------------------------------------> Ended  (from every phase but Ended): final
//
// A new engine is Running (it starts or resumes from there). The run's stored state (RunInfo::state:
// running, paused, stopped, finished, failed) is separate: it is what the store and the views are told.
class RunLifecycle
{
public:
    // In this order: the phases that act on outcomes first (acting() compares).
    enum class Phase { Running, Pausing, Paused, Draining, Stopping, Halted, Ended };

    Phase phase() const { return m_phase; }
    // Why the run is Draining (the budget reached) or Halted (the store's error); empty in other phases.
    QString reason() const { return m_reason; }

    // Whether a run in `from` may move to `to` (the diagram above); never to the phase it is in.
    static bool allows(Phase from, Phase to);
    // Moves to `to`, with the reason of a Draining or Halted phase. An illegal move asserts in debug builds;
    // otherwise it is refused and returns false, the phase unchanged.
    bool moveTo(Phase to, const QString &reason = {});

    // Work starts and answers and verdicts are acted on (Running, Pausing, Paused, Draining).
    bool acting() const { return m_phase <= Phase::Draining; }
    // New work waits for resumeWork() (Pausing, Paused).
    bool deferring() const { return m_phase == Phase::Pausing || m_phase == Phase::Paused; }
    // The engine still drives the run: writes to the store and holds the lease (neither Halted nor Ended).
    bool live() const { return m_phase != Phase::Halted && m_phase != Phase::Ended; }
    bool ended() const { return m_phase == Phase::Ended; }

    // The lease's heartbeat, counted in ticks of the control timer (every `tickMs`): true once every
    // RunLease::heartbeatIntervalMs().
    bool heartbeatDue(int tickMs);

    static QString name(Phase phase);

private:
    Phase m_phase = Phase::Running;
    QString m_reason;
    int m_heartbeatTick = 0;
};

} // namespace autocomp
