#include "cli_run_control.h"

#include "search/search_engine.h"

#include <algorithm>
#include <QJsonArray>
#include <QSocketNotifier>
#include <QTimer>
#include <QThread>

#include <csignal>

#include <fcntl.h>
#include <unistd.h>

namespace autocomp::cli {

std::unique_ptr<RunStore> openStore(const QString &path, StoreUse use, QTextStream &err)
{
    RunStore::OpenOptions options;
    options.create = use == StoreUse::Create || use == StoreUse::Import;
    options.createFolders = use == StoreUse::Create;
    options.allowReadOnly = use == StoreUse::Read;
    QString error;
    auto store = RunStore::open(path, options, &error);
    if (!store) {
        err << "autocomp: " << error << Qt::endl;
        return nullptr;
    }
    if (store->isReadOnly())
        err << "autocomp: note: " << store->readOnlyNote() << Qt::endl;
    return store;
}

int runExitCode(const RunInfo &run)
{
    switch (run.state) {
    case RunState::Finished: return RunExitFinished;
    case RunState::Stopped:
    case RunState::Paused: return RunExitStopped;
    default: return RunExitFailed;
    }
}

namespace {

bool ended(RunState state)
{
    return state == RunState::Finished || state == RunState::Failed || state == RunState::Stopped;
}

// Records the state of a run no process drives. Calls it had in flight when its process died stay unconfirmed.
// nullopt (nothing written) when a process took the run over meanwhile, which is then asked instead.
std::optional<int> recordDirectly(RunStore &store, qint64 runId, RunState wanted, const QString &command,
                                  QTextStream &out, QTextStream &err)
{
    const QString reason = QStringLiteral("%1 while no process was driving it")
                               .arg(command == QLatin1String("pause") ? QStringLiteral("paused")
                                                                      : QStringLiteral("stopped"));
    switch (store.recordUndrivenState(runId, wanted, reason)) {
    case RunStore::UndrivenWrite::TakenOver: return std::nullopt;
    case RunStore::UndrivenWrite::Failed:
        err << "autocomp: cannot record run " << runId << "'s state: " << store.lastError() << Qt::endl;
        return 1;
    case RunStore::UndrivenWrite::Recorded: break;
    }
    out << "run " << runId << ' ' << toString(wanted) << " (no process was driving it; `autocomp resume " << runId
        << "` continues it)" << Qt::endl;
    return 0;
}

} // namespace

int controlRun(RunStore &store, qint64 runId, const QString &command, QTextStream &out, QTextStream &err)
{
    const RunState wanted = command == QLatin1String("pause") ? RunState::Paused : RunState::Stopped;
    auto run = store.run(runId);
    if (!run) {
        err << "autocomp: no run " << runId << " in " << store.path() << Qt::endl;
        return 1;
    }
    if (run->state == wanted) {
        out << "run " << runId << " is already " << toString(wanted) << Qt::endl;
        return 0;
    }
    if (ended(run->state)) {
        err << "autocomp: run " << runId << " has ended (" << toString(run->state) << "); there is nothing to "
            << command << Qt::endl;
        return 1;
    }
    const auto lease = store.lease(runId);
    if (!lease || !lease->alive) {
        if (const auto recorded = recordDirectly(store, runId, wanted, command, out, err))
            return *recorded;
    }
    if (!store.requestState(runId, command)) {
        err << "autocomp: cannot ask run " << runId << " to " << command << ": " << store.lastError() << Qt::endl;
        return 1;
    }
    // The driving process polls for requests twice a second. Stop cancels in-flight work, so it ends at once;
    // pause lets in-flight work finish. Return as soon as the run's state says it happened or its driver is gone.
    bool told = false;
    for (int i = 0;; ++i) {
        QThread::msleep(100);
        run = store.run(runId);
        if (!run) {
            err << "autocomp: run " << runId << " was deleted" << Qt::endl;
            return 1;
        }
        if (run->state == wanted || ended(run->state)) {
            out << "run " << runId << ' ' << toString(run->state) << " (" << run->stopReason << ')' << Qt::endl;
            return run->state == wanted || (wanted == RunState::Stopped && ended(run->state)) ? 0 : 1;
        }
        const auto now = store.lease(runId);
        if (!now || !now->alive) {
            // Its driver ended without recording the state (killed meanwhile).
            run = store.run(runId);
            if (run && !ended(run->state) && run->state != wanted) {
                if (const auto recorded = recordDirectly(store, runId, wanted, command, out, err))
                    return *recorded;
                // Taken over meanwhile, by a process that cleared the requests it found: asked again.
                if (!store.requestState(runId, command)) {
                    err << "autocomp: cannot ask run " << runId << " to " << command << ": " << store.lastError()
                        << Qt::endl;
                    return 1;
                }
                continue;
            }
            out << "run " << runId << ' ' << toString(run ? run->state : wanted) << Qt::endl;
            return 0;
        }
        if (i == 50 && !told) {
            told = true;
            err << "autocomp: waiting for run " << runId << " (" << now->describe() << ") to " << command
                << (wanted == RunState::Paused ? "; in-flight work finishes first" : "") << Qt::endl;
        }
    }
}

namespace {

int s_signalPipe[2] = {-1, -1};

// Seconds within which the event loop must take a stop signal before the process ends regardless.
constexpr unsigned StuckExitSeconds = 10;

extern "C" void onStopSignal(int signal)
{
    const char byte = char(signal);
    [[maybe_unused]] const auto written = ::write(s_signalPipe[1], &byte, 1);
    // A watchdog for a process whose event loop is stuck (a call that never returns, a lock taken twice):
    // SIGALRM's default action ends it unless the loop takes the signal and keeps re-arming the alarm while
    // the stop goes on (StopOnSignals), so SIGTERM and Ctrl-C stop an evaluation stuck anywhere within
    // seconds. Sandboxed steps die with the process (bubblewrap's --die-with-parent).
    ::alarm(StuckExitSeconds);
}

} // namespace

struct StopOnSignals::Private
{
    std::unique_ptr<QSocketNotifier> notifier;
    QTimer watchdog;
    struct sigaction previousInt
    {};
    struct sigaction previousTerm
    {};
};

StopOnSignals::StopOnSignals(std::function<void(const QString &reason)> stop) : d(std::make_unique<Private>())
{
    if (::pipe2(s_signalPipe, O_CLOEXEC | O_NONBLOCK) != 0)
        return;
    d->notifier = std::make_unique<QSocketNotifier>(s_signalPipe[0], QSocketNotifier::Read);
    // While the event loop runs, it keeps the watchdog from firing: a stop that takes long on purpose (waiting
    // for answers already paid for, cancelling remote jobs) is not cut short; a stuck loop is.
    d->watchdog.setInterval(1000);
    QObject::connect(&d->watchdog, &QTimer::timeout, [] { ::alarm(StuckExitSeconds); });
    QObject::connect(d->notifier.get(), &QSocketNotifier::activated, [this, stop = std::move(stop)] {
        ::alarm(StuckExitSeconds);
        d->watchdog.start();
        char byte = 0;
        QString name = QStringLiteral("a signal");
        while (::read(s_signalPipe[0], &byte, 1) == 1)
            name = byte == SIGINT ? QStringLiteral("SIGINT (Ctrl-C)")
                : byte == SIGTERM ? QStringLiteral("SIGTERM")
                                  : name;
        stop(QStringLiteral("stopped by %1").arg(name));
    });
    ::signal(SIGALRM, SIG_DFL); // the watchdog's signal ends the process (never inherited as ignored)
    struct sigaction action
    {};
    action.sa_handler = onStopSignal;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART;
    ::sigaction(SIGINT, &action, &d->previousInt);
    ::sigaction(SIGTERM, &action, &d->previousTerm);
}

StopOnSignals::~StopOnSignals()
{
    ::alarm(0);
    if (!d->notifier)
        return;
    ::sigaction(SIGINT, &d->previousInt, nullptr);
    ::sigaction(SIGTERM, &d->previousTerm, nullptr);
    d->notifier.reset();
    ::close(s_signalPipe[0]);
    ::close(s_signalPipe[1]);
    s_signalPipe[0] = s_signalPipe[1] = -1;
}

void printRunNotes(RunStore &store, const RunInfo &run, QTextStream &out)
{
    const auto lease = store.lease(run.id);
    if (lease)
        out << (lease->alive ? "driven by " : "last driven by (gone) ") << lease->describe() << '\n';
    if (store.isInterrupted(run))
        out << "interrupted: no process drives it; `autocomp resume " << run.id << "` continues it\n";
    QList<LlmCall> unconfirmed = store.unconfirmedCalls(run.id);
    if (lease && lease->alive) {
        // Requests of the live driver are simply in flight, not unconfirmed.
        const auto inFlight = std::count_if(unconfirmed.cbegin(), unconfirmed.cend(),
                                            [](const LlmCall &c) { return c.status == QLatin1String("in_flight"); });
        if (inFlight > 0)
            out << "in flight: " << inFlight << " request(s)\n";
        unconfirmed.removeIf([](const LlmCall &c) { return c.status == QLatin1String("in_flight"); });
    }
    if (!unconfirmed.isEmpty()) {
        double usd = 0;
        for (const LlmCall &c : unconfirmed)
            usd += c.usd;
        out << "unconfirmed: " << unconfirmed.size()
            << " request(s) sent but never answered (killed or stopped in flight); "
            << "the provider may bill them, estimated $" << QString::number(usd, 'f', 4) << " (not in the totals)\n";
        for (const LlmCall &c : unconfirmed)
            out << "  call " << c.id << ": " << c.phase << ' ' << c.provider << "::" << c.model << " sent "
                << c.createdAt.toLocalTime().toString(QStringLiteral("yyyy-MM-dd HH:mm:ss")) << ", prompt "
                << c.requestHash.left(12) << ", ~" << c.tokensIn << " tokens in, est. $"
                << QString::number(c.usd, 'f', 4) << '\n';
    }
}

QJsonObject runNotesJson(RunStore &store, const RunInfo &run)
{
    QJsonObject o;
    o.insert(QStringLiteral("display_state"), store.displayState(run));
    if (const auto lease = store.lease(run.id))
        o.insert(QStringLiteral("lease"),
                 QJsonObject{{QStringLiteral("pid"), lease->pid},
                             {QStringLiteral("host"), lease->host},
                             {QStringLiteral("heartbeat"), lease->heartbeat.toString(Qt::ISODateWithMs)},
                             {QStringLiteral("alive"), lease->alive}});
    QJsonArray calls;
    double usd = 0;
    for (const LlmCall &c : store.unconfirmedCalls(run.id)) {
        usd += c.usd;
        calls.append(QJsonObject{{QStringLiteral("id"), c.id},
                                 {QStringLiteral("phase"), c.phase},
                                 {QStringLiteral("model"), QString(c.provider + QStringLiteral("::") + c.model)},
                                 {QStringLiteral("request_hash"), c.requestHash},
                                 {QStringLiteral("sent_at"), c.createdAt.toString(Qt::ISODateWithMs)},
                                 {QStringLiteral("estimated_usd"), c.usd}});
    }
    o.insert(QStringLiteral("unconfirmed_calls"), calls);
    o.insert(QStringLiteral("unconfirmed_usd_estimate"), usd);
    return o;
}

} // namespace autocomp::cli
