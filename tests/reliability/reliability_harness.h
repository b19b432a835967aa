#pragma once

// Shared by the reliability tests: a deterministic LLM script for the fake target, the CLI run as users
// run it (with a hook to signal or kill it at a chosen moment), a small tmpfs for disk-full and read-only
// stores, and the checks that a run lost nothing and paid nothing twice.
#include "fake_llm_server.h"
#include "store/run_store.h"

#include <QDir>
#include <QElapsedTimer>
#include <QHash>
#include <QProcess>
#include <QSet>
#include <QSignalSpy>
#include <QSqlDatabase>
#include <QSqlQuery>
#include <QTemporaryDir>
#include <QtTest>

#include <functional>

#include <unistd.h>

namespace autocomp::test {

// How the scripted server answers code requests.
enum class CodeAnswers { Normal, Hang };

// Answers depend on the prompt only (never on arrival order), so an interrupted run and an uninterrupted one
// see the same answers: plans by the menu items the dropout kept, code by the parent's latency and the item.
// `planPadding` characters of filler make every plan (and so every code prompt and candidate) that much larger;
// every answer waits `delayMs` before it starts.
inline QByteArray deterministicScript(CodeAnswers code = CodeAnswers::Normal, int planPadding = 0, int delayMs = 0)
{
    QString s = QStringLiteral("rules:\n");
    const int step[] = {10, 5, 3};
    QSet<int> levels{100};
    for (int round = 0; round < 4; ++round)
        for (int l : QSet<int>(levels))
            for (int d : step)
                levels.insert(l - d);
    const QString delay = delayMs > 0 ? QStringLiteral("        delay_ms: %1\n").arg(delayMs) : QString();
    const QString hang = (code == CodeAnswers::Hang ? QStringLiteral("        fault: never_end\n") : QString()) + delay;
    s += QStringLiteral("  - name: fix\n    match: 'Fixed code:\\s*$'\n    cycle: true\n    responses:\n"
                        "      - content: \"```cpp\\n// fake: status=ok latency_ms=93 compile_ms=5 bench_ms=10;\\nvoid "
                        "kernel() { /* fixed */ }\\n```\"\n")
        + hang;
    for (int level : std::as_const(levels)) {
        for (int item = 1; item <= 3; ++item) {
            const int next = level - step[item - 1];
            const QString status = (item == 2 && level == 95) ? QStringLiteral("compile_error") : QStringLiteral("ok");
            s += QStringLiteral("  - name: code-%1-%2\n    match: 'latency_ms=%1\\b[\\s\\S]*Chosen optimization: "
                                "%2\\.[\\s\\S]*Optimized code:\\s*$'\n"
                                "    cycle: true\n    responses:\n"
                                "      - content: \"```cpp\\n// fake: status=%3 latency_ms=%4 compile_ms=5 "
                                "bench_ms=10;\\nvoid kernel() { /* %4 */ }\\n```\"\n")
                     .arg(level)
                     .arg(item)
                     .arg(status)
                     .arg(next)
                + hang;
        }
    }
    const QString padding = planPadding > 0 ? QStringLiteral("\\n") + QString(planPadding, QLatin1Char('p'))
                                            : QString();
    const char *names[] = {"alpha: tile the loops", "beta: vectorize", "gamma: unroll"};
    for (int item = 1; item <= 3; ++item)
        s += QStringLiteral(
                 "  - name: plan-%1\n    match: '\\n%1\\. [\\s\\S]*Plan:\\s*$'\n    cycle: true\n    responses:\n"
                 "      - content: \"Chosen optimization: %1. %2\\nApply it.%3\"\n")
                 .arg(item)
                 .arg(QLatin1String(names[item - 1]), padding)
            + delay;
    s += QStringLiteral("  - name: plan-other\n    match: 'Plan:\\s*$'\n    cycle: true\n    responses:\n"
                        "      - content: \"Chosen optimization: 3. gamma: unroll\\nApply it.%1\"\n")
             .arg(padding)
        + delay;
    return s.toUtf8();
}

inline QByteArray runConfig(int iterations = 3, const QByteArray &extra = {})
{
    return "target: fake\nproblem: kernel\nagent: fake\nmodels: {plan: [\"vllm::m1\", \"vllm::m2\"]}\n"
           "search: {iterations: "
        + QByteArray::number(iterations)
        + ", beam_width: 2, plans_per_parent: 2, code_per_plan: 2, menu_dropout: 0.5, fix_attempts: 1, seed: 7}\n"
          "evaluation: {parallel_compiles: 2}\n"
        + extra;
}

inline bool writeFile(const QString &path, const QByteArray &data)
{
    QFile file(path);
    return file.open(QIODevice::WriteOnly) && file.write(data) == data.size();
}

struct CliResult
{
    bool finished = false; // ended by itself (not killed by us)
    int exitCode = -1;
    QString out;
    QString err;
    qint64 pid = 0;
};

// Runs the CLI with the fake target and the server; `poll` is called every 20 ms while it runs (it may signal
// or kill the process; return true once it did, to stop polling).
inline CliResult runCli(const QStringList &args, const FakeLlmServer &server,
                        const std::function<bool(QProcess &)> &poll = {}, const QProcessEnvironment &extraEnv = {},
                        const QStringList &wrapper = {})
{
    QProcess process;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("AUTOCOMP_DATA_DIR"), qEnvironmentVariable("AUTOCOMP_FAKE_DATA"));
    env.insert(QStringLiteral("VLLM_API_BASE"), server.baseUrl().toString() + QStringLiteral("/v1"));
    env.insert(QStringLiteral("VLLM_API_KEY"), QStringLiteral("test-key"));
    for (const QString &key : extraEnv.keys())
        env.insert(key, extraEnv.value(key));
    process.setProcessEnvironment(env);
    QSignalSpy finished(&process, &QProcess::finished);
    if (wrapper.isEmpty())
        process.start(qEnvironmentVariable("AUTOCOMP_CLI"), args);
    else
        process.start(wrapper.first(), wrapper.mid(1) + QStringList{qEnvironmentVariable("AUTOCOMP_CLI")} + args);
    CliResult result;
    if (!process.waitForStarted())
        return result;
    result.pid = process.processId();
    bool polling = bool(poll);
    while (finished.isEmpty()) {
        if (polling && poll(process))
            polling = false;
        finished.wait(20);
    }
    result.out = QString::fromUtf8(process.readAllStandardOutput());
    result.err = QString::fromUtf8(process.readAllStandardError());
    result.finished = process.exitStatus() == QProcess::NormalExit;
    result.exitCode = result.finished ? process.exitCode() : -1;
    return result;
}

inline QString describe(const CliResult &r)
{
    return QStringLiteral("exit %1 (%2)\n--- stdout\n%3\n--- stderr\n%4")
        .arg(r.exitCode)
        .arg(r.finished ? QStringLiteral("exited") : QStringLiteral("killed"), r.out.right(3000), r.err.right(6000));
}

// A tmpfs of a given size, unmounted when destroyed. Mounting needs root (or CAP_SYS_ADMIN).
class Tmpfs
{
public:
    bool mount(const QString &dir, const QString &size)
    {
        QDir().mkpath(dir);
        m_dir = dir;
        QProcess p;
        p.start(QStringLiteral("mount"),
                {QStringLiteral("-t"), QStringLiteral("tmpfs"), QStringLiteral("-o"), QStringLiteral("size=") + size,
                 QStringLiteral("tmpfs"), dir});
        p.waitForFinished();
        m_mounted = p.exitStatus() == QProcess::NormalExit && p.exitCode() == 0;
        m_error = QString::fromLocal8Bit(p.readAllStandardError()).trimmed();
        return m_mounted;
    }
    bool remount(const QString &options)
    {
        QProcess p;
        p.start(QStringLiteral("mount"), {QStringLiteral("-o"), QStringLiteral("remount,") + options, m_dir});
        p.waitForFinished();
        m_error = QString::fromLocal8Bit(p.readAllStandardError()).trimmed();
        return p.exitStatus() == QProcess::NormalExit && p.exitCode() == 0;
    }
    ~Tmpfs()
    {
        if (m_mounted)
            QProcess::execute(QStringLiteral("umount"), {QStringLiteral("-l"), m_dir});
    }
    QString error() const { return m_error.isEmpty() ? QStringLiteral("mount failed") : m_error; }

private:
    QString m_dir;
    QString m_error;
    bool m_mounted = false;
};

inline QStringList beamCodes(RunStore &store, qint64 runId)
{
    QStringList codes;
    for (const Candidate &c : store.candidates(runId))
        if (c.inBeam)
            codes << c.code.simplified();
    codes.sort();
    return codes;
}

// Nothing lost, nothing claimed: every candidate's parent exists and is another candidate, no candidate
// failed for a reason that is not its own (a cancelled request, a store error), nothing left in progress.
inline QString storedRunProblems(RunStore &store, qint64 runId)
{
    QStringList problems;
    const QList<Candidate> candidates = store.candidates(runId);
    QSet<qint64> ids;
    for (const Candidate &c : candidates)
        ids.insert(c.id);
    for (const Candidate &c : candidates) {
        if (c.parentId == c.id)
            problems << QStringLiteral("candidate %1 is its own parent").arg(c.id);
        if (c.origin != CandidateOrigin::Root && !ids.contains(c.parentId))
            problems << QStringLiteral("candidate %1's parent %2 is not stored").arg(c.id).arg(c.parentId);
        for (const char *bad : {"cancelled", "FOREIGN KEY", "store error", "not finished", "disk full"})
            if (c.error.contains(QLatin1String(bad)))
                problems << QStringLiteral("candidate %1 failed for a reason not its own: %2")
                                .arg(c.id)
                                .arg(c.error.left(200));
    }
    return problems.join(QLatin1Char('\n'));
}

// No avoidable repeated request: an answer is paid once per request key, and a key reaches the server again
// only as often as an earlier sending of it was cut off in flight (recorded as unconfirmed).
inline QString repeatedRequests(RunStore &store, qint64 runId, const FakeLlmServer &server)
{
    QStringList problems;
    QHash<QString, int> ok;
    QHash<QString, int> unconfirmed;
    for (const LlmCall &call : store.llmCalls(runId)) {
        const QString key = call.requestHash.left(32);
        if (call.status == QLatin1String("ok"))
            ++ok[key];
        else if (call.status == QLatin1String("unconfirmed") || call.status == QLatin1String("in_flight"))
            ++unconfirmed[key];
    }
    for (auto it = ok.cbegin(); it != ok.cend(); ++it)
        if (it.value() > 1)
            problems << QStringLiteral("request %1 was paid %2 times").arg(it.key()).arg(it.value());
    QHash<QString, int> sent;
    for (const RecordedRequest &r : server.requests())
        ++sent[QString::fromLatin1(r.header("x-autocomp-request"))];
    for (auto it = sent.cbegin(); it != sent.cend(); ++it)
        if (it.value() > 1 + unconfirmed.value(it.key()))
            problems << QStringLiteral("request %1 was sent %2 times, %3 of them cut off in flight")
                            .arg(it.key())
                            .arg(it.value())
                            .arg(unconfirmed.value(it.key()));
    return problems.join(QLatin1Char('\n'));
}

inline QString integrity(const QString &path)
{
    const QString name = QStringLiteral("integrity-%1").arg(QDateTime::currentMSecsSinceEpoch());
    QString result;
    {
        QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), name);
        db.setDatabaseName(path);
        if (db.open()) {
            QSqlQuery q(db);
            if (q.exec(QStringLiteral("PRAGMA integrity_check")) && q.next())
                result = q.value(0).toString();
        }
        db.close();
    }
    QSqlDatabase::removeDatabase(name);
    return result;
}

inline int countOf(const QString &text, const QString &needle) { return int(text.count(needle)); }

} // namespace autocomp::test
