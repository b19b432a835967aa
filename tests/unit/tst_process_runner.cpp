// ProcessRunner against small misbehaving programs (tests/unit/fixtures): candidates that hang, crash,
// flood their output, leave children behind or allocate without bound must not take the workbench with them.
#include "eval/process_runner.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

#include <csignal>
#include <fcntl.h>
#include <sys/types.h>
#include <unistd.h>

using namespace Qt::StringLiterals;
using namespace autocomp;

namespace {

constexpr int FinishTimeoutMs = 60000;

// True while `pid` is a live process; a zombie waiting for its parent to reap it counts as gone.
bool alive(qint64 pid)
{
    if (pid <= 0 || ::kill(pid_t(pid), 0) != 0)
        return false;
    QFile stat(u"/proc/%1/stat"_s.arg(pid));
    if (!stat.open(QIODevice::ReadOnly))
        return true;
    const QByteArray text = stat.readAll();
    const qsizetype close = text.lastIndexOf(')');
    return close < 0 || text.mid(close + 2, 1) != "Z";
}

QList<qint64> readPids(const QString &path)
{
    QFile file(path);
    QList<qint64> pids;
    if (!file.open(QIODevice::ReadOnly))
        return pids;
    for (const QByteArray &part : file.readAll().simplified().split(' '))
        if (const qint64 pid = part.toLongLong(); pid > 0)
            pids << pid;
    return pids;
}

} // namespace

class TestProcessRunner : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void init();
    void cleanup();
    void exitCodeAndOutput_data();
    void exitCodeAndOutput();
    void missingProgram();
    void hangIsKilledAtTimeout();
    void crashIsReported();
    void floodIsCapped();
    void orphanIsKilledWhenStepEnds();
    void allocationIsStoppedByAddressSpaceLimit();
    void cancelKillsGroup();
    void environmentIsAnAllowList();
    void descriptorsAboveTwoAreClosed();
    void sandboxShowsNoHomeStoreOrEtc();
    void judgedWorkersShareAChannel();
    void setupFailureIsNotAVerdict();
    void onlyRealCgroupsAreParents();
    void liveProcessesCgroupsAreLeftAlone();

private:
    StepResult run(const QStringList &command, const ProcessLimits &limits);

    std::unique_ptr<QTemporaryDir> m_dir;
    QList<qint64> m_pids; // fixture processes to clean up if a test fails
};

void TestProcessRunner::init()
{
    m_dir = std::make_unique<QTemporaryDir>();
    QVERIFY(m_dir->isValid());
    m_pids.clear();
}

void TestProcessRunner::cleanup()
{
    // Only processes this test started (read from the fixtures' pid files).
    for (qint64 pid : std::as_const(m_pids))
        if (alive(pid))
            ::kill(pid_t(pid), SIGKILL);
    m_dir.reset();
}

StepResult TestProcessRunner::run(const QStringList &command, const ProcessLimits &limits)
{
    ProcessRunner runner;
    QSignalSpy spy(&runner, &ProcessRunner::finished);
    runner.start(u"step"_s, command, m_dir->path(), limits);
    // A program that cannot be started may be reported from inside start() already.
    if (spy.isEmpty() && !spy.wait(FinishTimeoutMs)) {
        qWarning() << "the runner did not finish" << command;
        return {};
    }
    if (spy.size() != 1)
        qWarning() << "finished emitted" << spy.size() << "times";
    return spy.first().first().value<StepResult>();
}

void TestProcessRunner::exitCodeAndOutput_data()
{
    QTest::addColumn<QStringList>("command");
    QTest::addColumn<int>("exitCode");
    QTest::addColumn<QString>("log");

    QTest::newRow("success") << QStringList{u"sh"_s, u"-c"_s, u"echo compiled"_s} << 0 << u"compiled"_s;
    QTest::newRow("failure exit code") << QStringList{u"sh"_s, u"-c"_s, u"echo 'error: x' >&2; exit 3"_s} << 3
                                       << u"error: x"_s;
    QTest::newRow("stdout and stderr merged")
        << QStringList{u"sh"_s, u"-c"_s, u"echo out; echo err >&2; echo out2"_s} << 0 << u"out\nerr\nout2"_s;
    QTest::newRow("arguments are not shell-expanded")
        << QStringList{u"echo"_s, u"$HOME; rm -rf /"_s} << 0 << u"$HOME; rm -rf /"_s;
}

void TestProcessRunner::exitCodeAndOutput()
{
    QFETCH(QStringList, command);
    QFETCH(int, exitCode);
    QFETCH(QString, log);

    ProcessLimits limits;
    limits.timeoutS = 30;
    const StepResult result = run(command, limits);
    QCOMPARE(result.name, u"step"_s);
    QCOMPARE(result.command, command);
    QCOMPARE(result.exitCode, exitCode);
    QCOMPARE(result.log, log);
    QVERIFY(!result.timedOut);
    QVERIFY(!result.crashed);
    QVERIFY(result.durationMs > 0);
}

void TestProcessRunner::missingProgram()
{
    ProcessLimits limits;
    const StepResult result = run({u"/nonexistent/compiler"_s, u"-O3"_s}, limits);
    QCOMPARE(result.exitCode, 127);
    QVERIFY2(result.log.contains(u"/nonexistent/compiler"_s), qPrintable(result.log));
    QVERIFY(!result.timedOut);
}

void TestProcessRunner::hangIsKilledAtTimeout()
{
    const QString pidFile = m_dir->filePath(u"pids"_s);
    ProcessLimits limits;
    limits.timeoutS = 1;
    const StepResult result = run({QStringLiteral(AUTOCOMP_FIXTURE_HANG), pidFile}, limits);
    m_pids = readPids(pidFile);
    QCOMPARE(m_pids.size(), 2);
    QVERIFY(result.timedOut);
    QVERIFY(!result.crashed); // a timeout is reported as a timeout, not as a crash
    QVERIFY2(result.log.contains(u"hanging"_s), qPrintable(result.log));
    QVERIFY2(result.log.contains(u"time limit"_s), qPrintable(result.log));
    QVERIFY(result.durationMs >= 900);
    // The program and the child it forked are both gone.
    QTRY_VERIFY_WITH_TIMEOUT(!alive(m_pids.at(0)), 10000);
    QTRY_VERIFY_WITH_TIMEOUT(!alive(m_pids.at(1)), 10000);
}

void TestProcessRunner::crashIsReported()
{
    ProcessLimits limits;
    limits.timeoutS = 30;
    const StepResult result = run({QStringLiteral(AUTOCOMP_FIXTURE_CRASH)}, limits);
    QVERIFY(result.crashed);
    QVERIFY(!result.timedOut);
    QVERIFY(result.exitCode != 0);
    QVERIFY2(result.log.startsWith(u"about to crash"_s), qPrintable(result.log));
    QVERIFY2(result.log.contains(u"abnormally"_s), qPrintable(result.log));
}

void TestProcessRunner::floodIsCapped()
{
    ProcessLimits limits;
    limits.timeoutS = 60;
    const StepResult result = run({QStringLiteral(AUTOCOMP_FIXTURE_FLOOD)}, limits);
    QVERIFY(!result.timedOut);
    QVERIFY(!result.crashed);
    QCOMPARE(result.exitCode, 0); // reading continued: the program was never blocked on a full pipe
    QVERIFY2(result.log.size() <= limits.maxOutputBytes + 200, qPrintable(QString::number(result.log.size())));
    QVERIFY(result.log.size() >= limits.maxOutputBytes / 2);
    QVERIFY(result.log.startsWith(QString(1023, u'x')));
    QVERIFY2(result.log.contains(u"[output truncated"_s), qPrintable(result.log.right(200)));
    // The marker says how much was dropped: 50 MiB written, 1 MiB kept.
    const qint64 dropped = 50LL * 1024 * 1024 - limits.maxOutputBytes;
    QVERIFY2(result.log.contains(QString::number(dropped)), qPrintable(result.log.right(200)));
}

void TestProcessRunner::orphanIsKilledWhenStepEnds()
{
    const QString pidFile = m_dir->filePath(u"child"_s);
    ProcessLimits limits;
    limits.timeoutS = 30;
    const StepResult result = run({QStringLiteral(AUTOCOMP_FIXTURE_FORKER), pidFile}, limits);
    m_pids = readPids(pidFile);
    QCOMPARE(m_pids.size(), 1);
    // The step ends when the program exits, without waiting for the child's minute of sleep.
    QVERIFY(!result.timedOut);
    QCOMPARE(result.exitCode, 0);
    QVERIFY2(result.log.contains(u"parent leaving"_s), qPrintable(result.log));
    QVERIFY2(result.durationMs < 25000, qPrintable(QString::number(result.durationMs)));
    QTRY_VERIFY_WITH_TIMEOUT(!alive(m_pids.at(0)), 10000);
}

void TestProcessRunner::allocationIsStoppedByAddressSpaceLimit()
{
    ProcessLimits limits;
    limits.timeoutS = 60;
    limits.addressSpaceBytes = 512LL << 20;
    const StepResult result = run({QStringLiteral(AUTOCOMP_FIXTURE_ALLOC)}, limits);
    QVERIFY2(!result.log.contains(u"no limit"_s), "the address-space limit was not applied");
    QVERIFY(!result.timedOut);
    QVERIFY2(result.exitCode != 0 || result.crashed, qPrintable(result.log));
    QVERIFY2(result.log.contains(u"allocated 64 MiB"_s), qPrintable(result.log)); // it did run
    QVERIFY(!result.log.contains(u"allocated 512 MiB"_s));
}

void TestProcessRunner::cancelKillsGroup()
{
    const QString pidFile = m_dir->filePath(u"pids"_s);
    ProcessLimits limits;
    limits.timeoutS = 120;
    ProcessRunner runner;
    QSignalSpy spy(&runner, &ProcessRunner::finished);
    runner.start(u"bench"_s, {QStringLiteral(AUTOCOMP_FIXTURE_HANG), pidFile}, m_dir->path(), limits);
    QVERIFY(runner.isRunning());
    QTRY_COMPARE_WITH_TIMEOUT(readPids(pidFile).size(), 2, 10000);
    m_pids = readPids(pidFile);
    runner.cancel();
    QTRY_COMPARE_WITH_TIMEOUT(spy.size(), 1, 10000);
    const StepResult result = spy.first().first().value<StepResult>();
    QVERIFY(!result.timedOut);
    QVERIFY(!result.crashed); // a user's cancel is not a failure of the candidate
    QVERIFY2(result.log.contains(u"cancelled"_s), qPrintable(result.log));
    QVERIFY(!runner.isRunning());
    QTRY_VERIFY_WITH_TIMEOUT(!alive(m_pids.at(0)), 10000);
    QTRY_VERIFY_WITH_TIMEOUT(!alive(m_pids.at(1)), 10000);
}

// A child gets PATH, LANG, TMPDIR, HOME and what the limits name: none of this process's variables
// (API keys live there).
void TestProcessRunner::environmentIsAnAllowList()
{
    qputenv("OPENAI_API_KEY", "sk-test-canary-env");
    qputenv("AUTOCOMP_TEST_CANARY", "canary-value");
    ProcessLimits limits;
    limits.timeoutS = 30;
    limits.environment = {{u"OMP_NUM_THREADS"_s, u"1"_s}};
    const StepResult result = run({u"env"_s}, limits);
    QCOMPARE(result.exitCode, 0);
    QVERIFY2(!result.log.contains(u"canary"_s), qPrintable(result.log));
    QVERIFY(result.log.contains(u"OMP_NUM_THREADS=1"_s));
    QVERIFY(result.log.contains(u"PATH="_s));
    QVERIFY(result.log.contains(u"HOME="_s));
    qunsetenv("OPENAI_API_KEY");
    qunsetenv("AUTOCOMP_TEST_CANARY");
}

// Descriptors this process holds (the run store, sockets) do not reach a child; passed ones do, at 3.
void TestProcessRunner::descriptorsAboveTwoAreClosed()
{
    QFile held(m_dir->filePath(u"held.txt"_s));
    QVERIFY(held.open(QIODevice::WriteOnly));
    const int heldFd = held.handle();
    QVERIFY(heldFd > 2);
    ::fcntl(heldFd, F_SETFD, 0); // even one not marked close-on-exec
    ProcessLimits limits;
    limits.timeoutS = 30;
    StepResult result = run({u"sh"_s, u"-c"_s, u"ls /proc/self/fd"_s}, limits);
    QCOMPARE(result.exitCode, 0);
    QStringList fds = result.log.split(u'\n', Qt::SkipEmptyParts);
    // 0, 1, 2 and the descriptor ls opens to read the directory.
    QVERIFY2(fds.size() <= 4 && !fds.contains(QString::number(heldFd)), qPrintable(result.log));
    limits.passFds = {heldFd};
    result = run({u"sh"_s, u"-c"_s, u"readlink /proc/self/fd/3"_s}, limits);
    QVERIFY2(result.log.endsWith(u"held.txt"_s), qPrintable(result.log));
}

// The sandbox shows /usr and the directories named, not $HOME, the store or /etc/passwd.
void TestProcessRunner::sandboxShowsNoHomeStoreOrEtc()
{
    if (!ProcessRunner::sandboxAvailable())
        QSKIP("bubblewrap cannot run here");
    ProcessLimits limits;
    limits.timeoutS = 30;
    limits.sandbox = true;
    limits.writableDir = m_dir->path();
    const QString home = QDir::homePath();
    const StepResult result = run({u"sh"_s, u"-c"_s,
                                   u"cat /etc/passwd; ls %1; ls /; ls /usr/bin/c++ && echo compiler-visible; "
                                   "echo x > %2/w && echo workdir-writable"_s.arg(home, m_dir->path())},
                                  limits);
    QVERIFY2(!result.log.contains(u"root:x:0:0"_s), qPrintable(result.log));
    QVERIFY2(result.log.contains(u"compiler-visible"_s), qPrintable(result.log));
    QVERIFY2(result.log.contains(u"workdir-writable"_s), qPrintable(result.log));
    QVERIFY2(result.log.contains(u"No such file"_s), qPrintable(result.log));
}

// A judge and its worker: the worker has the channel at 3, the judge sees it at 3 and the worker's pid.
void TestProcessRunner::judgedWorkersShareAChannel()
{
    ProcessLimits limits;
    limits.timeoutS = 30;
    ProcessRunner runner;
    QSignalSpy spy(&runner, &ProcessRunner::finished);
    // The worker writes into the channel, the judge waits for it and prints it, then checks the pid.
    const QStringList worker{u"sh"_s, u"-c"_s, u"printf hello-from-worker >&3; echo worker-out; sleep 30"_s};
    const QStringList judge{
        u"sh"_s, u"-c"_s,
        u"for i in $(seq 100); do grep -q hello /proc/self/fd/3 && break; sleep 0.05; done; "
        "head -c 17 /proc/self/fd/3; echo; kill -0 {worker_pids} && echo worker-alive {channels}"_s};
    runner.startJudged(u"judged"_s, judge, {worker}, m_dir->path(), limits, limits);
    QVERIFY(spy.wait(FinishTimeoutMs));
    const StepResult result = spy.first().first().value<StepResult>();
    QCOMPARE(result.exitCode, 0);
    QVERIFY2(result.log.contains(u"hello-from-worker"_s), qPrintable(result.log));
    QVERIFY2(result.log.contains(u"worker-alive 3"_s), qPrintable(result.log));
    // The worker ends with its judge; its output follows the judge's.
    QVERIFY2(result.log.contains(u"worker-out"_s), qPrintable(result.log));
}

// The child could not apply the command's limits (here: a channel to pass that is not open): the
// command never runs, and the result says so as a failure of the machinery, not the command's status.
void TestProcessRunner::setupFailureIsNotAVerdict()
{
    const int notOpen = 999;
    QCOMPARE(::fcntl(notOpen, F_GETFD), -1);
    const QString marker = m_dir->filePath(u"ran"_s);
    ProcessLimits limits;
    limits.timeoutS = 30;
    limits.passFds = {notOpen};
    StepResult result = run({u"sh"_s, u"-c"_s, u"touch %1"_s.arg(marker)}, limits);
    QVERIFY(result.setupFailed);
    QCOMPARE(result.exitCode, 126);
    QVERIFY2(result.log.contains(u"was not run"_s) && result.log.contains(u"channels"_s), qPrintable(result.log));
    QVERIFY(!QFile::exists(marker));
    // A command that exits 126 by itself is its own result.
    limits.passFds.clear();
    result = run({u"sh"_s, u"-c"_s, u"echo mine; exit 126"_s}, limits);
    QVERIFY(!result.setupFailed);
    QCOMPARE(result.exitCode, 126);
    QCOMPARE(result.log, u"mine"_s);
}

// A plain directory (what /sys/fs/cgroup is where only v1 hierarchies are mounted on a tmpfs) takes
// any mkdir and file: it is never taken for a cgroup, and nothing is left in it.
void TestProcessRunner::onlyRealCgroupsAreParents()
{
    QCOMPARE(ProcessRunner::usableCgroupParent({m_dir->path()}, "pids"), QString());
    QCOMPARE(ProcessRunner::usableCgroupParent({m_dir->path()}, "cpuset"), QString());
    QVERIFY(QDir(m_dir->path()).entryList(QDir::AllEntries | QDir::NoDotAndDotDot).isEmpty());
    const QString parent = ProcessRunner::pidsCgroupParent();
    if (parent.isEmpty())
        QSKIP("no pids cgroup can be made here (not root, or no delegated cgroup)");
    QVERIFY(QFileInfo::exists(parent + u"/cgroup.procs"_s));
    QCOMPARE(ProcessRunner::usableCgroupParent({m_dir->path(), parent}, "pids"), parent);
}

// Starting processes remove the cgroups of killed runs, and only those: another live process's
// probe, or its cgroup made and not yet joined by its command, stays (removing them made that
// process's command fail to start).
void TestProcessRunner::liveProcessesCgroupsAreLeftAlone()
{
    const QString parent = ProcessRunner::pidsCgroupParent();
    if (parent.isEmpty())
        QSKIP("no pids cgroup can be made here (not root, or no delegated cgroup)");
    QProcess sleeper;
    sleeper.start(u"sleep"_s, {u"60"_s});
    QVERIFY(sleeper.waitForStarted());
    const qint64 live = sleeper.processId();
    QProcess gone;
    gone.start(u"true"_s, {});
    QVERIFY(gone.waitForStarted());
    const qint64 dead = gone.processId();
    QVERIFY(gone.waitForFinished());
    QVERIFY(!QFileInfo::exists(u"/proc/%1"_s.arg(dead)));
    const QStringList liveNames{u"autocomp-probe-%1-pids"_s.arg(live), u"autocomp-%1-3"_s.arg(live),
                                u"autocomp-%1-c2"_s.arg(live)};
    const QStringList deadNames{u"autocomp-probe-%1-pids"_s.arg(dead), u"autocomp-%1-5"_s.arg(dead)};
    QDir dir(parent);
    for (const QString &name : liveNames + deadNames)
        QVERIFY2(dir.mkdir(name), qPrintable(name));
    ProcessRunner::removeStaleCgroups(parent);
    QStringList kept;
    for (const QString &name : liveNames + deadNames)
        if (dir.exists(name))
            kept << name;
    for (const QString &name : std::as_const(kept))
        dir.rmdir(name);
    sleeper.kill();
    sleeper.waitForFinished();
    QCOMPARE(kept, liveNames);
}

QTEST_GUILESS_MAIN(TestProcessRunner)
#include "tst_process_runner.moc"
