// RunStore and the JSONL archive: everything a run paid for is kept, read back unchanged, and never
// written over a file that is not ours.
#include "exchange/autocomp_dir.h"
#include "exchange/run_archive.h"
#include "store/run_store.h"

#include <QCryptographicHash>
#include <QFile>
#include <QJsonArray>
#include <QRandomGenerator>
#include <QSqlDatabase>
#include <QSqlError>
#include <QSqlQuery>
#include <QCoreApplication>
#include <QSysInfo>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>
#include <limits>

using namespace Qt::StringLiterals;
using namespace autocomp;

namespace {

const double NaN = std::numeric_limits<double>::quiet_NaN();

QByteArray fileBytes(const QString &path)
{
    QFile file(path);
    return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
}

RunInfo sampleRun()
{
    RunInfo run;
    run.target = u"cpu"_s;
    run.problem = u"gemm"_s;
    run.agent = u"cpu"_s;
    run.configYaml = u"target: cpu\nproblem: gemm\n"_s;
    run.state = RunState::Paused;
    run.stopReason = u"paused by the user"_s;
    run.label = u"unit test"_s;
    run.createdAt = QDateTime(QDate(2025, 3, 4), QTime(5, 6, 7, 890), Qt::UTC);
    run.iteration = 3;
    run.metric = u"latency_ms"_s;
    run.baselineScore = 12.5;
    run.bestScore = 3.25;
    run.usd = 1.75;
    run.tokensIn = 12345;
    run.tokensOut = 678;
    run.llmCalls = 9;
    return run;
}

Candidate makeCandidate(qint64 runId, qint64 parentId, const QString &code)
{
    Candidate c;
    c.runId = runId;
    c.parentId = parentId;
    c.iteration = parentId ? 1 : 0;
    c.origin = parentId ? CandidateOrigin::Llm : CandidateOrigin::Root;
    c.status = CandidateStatus::Correct;
    c.code = code;
    c.score = 2.5;
    return c;
}

LlmCall makeCall(qint64 runId, qint64 candidateId, const QString &phase, const QString &hash, const QString &status)
{
    LlmCall call;
    call.runId = runId;
    call.candidateId = candidateId;
    call.phase = phase;
    call.requestHash = hash;
    call.provider = u"openai"_s;
    call.model = u"gpt-5.2"_s;
    call.prompt = u"prompt for "_s + phase;
    call.response = status == u"ok"_s ? u"response for "_s + phase : QString();
    call.status = status;
    call.error = status == u"ok"_s ? QString() : u"HTTP 500: overloaded"_s;
    return call;
}

void compareCandidates(const Candidate &actual, const Candidate &expected)
{
    QCOMPARE(actual.runId, expected.runId);
    QCOMPARE(actual.parentId, expected.parentId);
    QCOMPARE(actual.iteration, expected.iteration);
    QCOMPARE(toString(actual.origin), toString(expected.origin));
    QCOMPARE(toString(actual.status), toString(expected.status));
    QCOMPARE(actual.plan, expected.plan);
    QCOMPARE(actual.menuItem, expected.menuItem);
    QCOMPARE(actual.code, expected.code);
    QCOMPARE(actual.hasScore(), expected.hasScore());
    if (expected.hasScore())
        QCOMPARE(actual.score, expected.score);
    QCOMPARE(actual.metrics, expected.metrics);
    QCOMPARE(actual.feedback, expected.feedback);
    QCOMPARE(actual.flags, expected.flags);
    QCOMPARE(actual.planModel, expected.planModel);
    QCOMPARE(actual.codeModel, expected.codeModel);
    QCOMPARE(actual.error, expected.error);
    QCOMPARE(actual.inBeam, expected.inBeam);
}

void compareCalls(const LlmCall &actual, const LlmCall &expected)
{
    QCOMPARE(actual.phase, expected.phase);
    QCOMPARE(actual.requestHash, expected.requestHash);
    QCOMPARE(actual.provider, expected.provider);
    QCOMPARE(actual.model, expected.model);
    QCOMPARE(actual.prompt, expected.prompt);
    QCOMPARE(actual.response, expected.response);
    QCOMPARE(actual.reasoning, expected.reasoning);
    QCOMPARE(actual.tokensIn, expected.tokensIn);
    QCOMPARE(actual.tokensOut, expected.tokensOut);
    QCOMPARE(actual.usd, expected.usd);
    QCOMPARE(actual.latencyMs, expected.latencyMs);
    QCOMPARE(actual.retries, expected.retries);
    QCOMPARE(actual.status, expected.status);
    QCOMPARE(actual.error, expected.error);
}

// Raw SQLite access to a file, for preparing files the store must refuse.
class RawDb
{
public:
    explicit RawDb(const QString &path) : m_name(u"raw-"_s + QString::number(++s_counter))
    {
        QSqlDatabase db = QSqlDatabase::addDatabase(u"QSQLITE"_s, m_name);
        db.setDatabaseName(path);
        m_ok = db.open();
    }
    ~RawDb()
    {
        {
            QSqlDatabase db = QSqlDatabase::database(m_name, false);
            db.close();
        }
        QSqlDatabase::removeDatabase(m_name);
    }
    bool ok() const { return m_ok; }
    QString name() const { return m_name; }
    bool exec(const QString &sql)
    {
        QSqlQuery q(QSqlDatabase::database(m_name));
        if (!q.exec(sql)) {
            qWarning() << sql << q.lastError().text();
            return false;
        }
        return true;
    }

private:
    static inline int s_counter = 0;
    QString m_name;
    bool m_ok = false;
};

} // namespace

class TestRunStore : public QObject
{
    Q_OBJECT

private Q_SLOTS:
    void init();
    void createsStoreAndRunRoundTrips();
    void candidateRoundTrip_data();
    void candidateRoundTrip();
    void updateCandidateKeepsId();
    void llmCallsAndPlanLink();
    void evaluationSteps();
    void setBeamReplacesBeam();
    void deleteRunRemovesChildren();
    void cachedResponseFindsOkCallsOnly();
    void usageByModelSumsPaidCalls();
    void refusesRandomBytes();
    void refusesOtherApplicationsDatabase();
    void refusesNewerSchema();
    void refusesDirectory();
    void reopenKeepsData();
    void upgradesSchema5KeepingData();
    void upgradesSchema6AddingMetricUnit();
    void metricUnitTravelsWithTheRun();
    void failedReadIsNotAnEmptyAnswer();
    void runRequestsAreSettledOnce();
    void exportImportReproducesRun();
    void importBadLineLeavesNothing_data();
    void importBadLineLeavesNothing();

private:
    std::unique_ptr<RunStore> openStore(const QString &name);
    // A store at `path` holding one run, one candidate (`code`, `feedback`) and one LLM call (`hash`), closed again.
    void seedStore(const QString &path, const QString &code, const QStringList &feedback, const QString &hash,
                   qint64 *runId, qint64 *candidateId);

    std::unique_ptr<QTemporaryDir> m_dir;
};

void TestRunStore::init()
{
    m_dir = std::make_unique<QTemporaryDir>();
    QVERIFY(m_dir->isValid());
}

std::unique_ptr<RunStore> TestRunStore::openStore(const QString &name)
{
    QString error;
    auto store = RunStore::open(m_dir->filePath(name), &error);
    if (!store)
        qWarning().noquote() << "cannot open store:" << error;
    return store;
}

void TestRunStore::createsStoreAndRunRoundTrips()
{
    const QString path = m_dir->filePath(u"nested/dir/runs.sqlite"_s);
    QString error;
    auto store = RunStore::open(path, &error);
    QVERIFY2(store, qPrintable(error));
    QVERIFY(QFile::exists(path));
    QVERIFY(store->runs().isEmpty());

    const RunInfo in = sampleRun();
    const qint64 id = store->createRun(in);
    QVERIFY2(id > 0, qPrintable(store->lastError()));
    const auto out = store->run(id);
    QVERIFY(out);
    QCOMPARE(out->id, id);
    QCOMPARE(out->target, in.target);
    QCOMPARE(out->problem, in.problem);
    QCOMPARE(out->agent, in.agent);
    QCOMPARE(out->configYaml, in.configYaml);
    QCOMPARE(toString(out->state), toString(in.state));
    QCOMPARE(out->stopReason, in.stopReason);
    QCOMPARE(out->label, in.label);
    QCOMPARE(out->createdAt, in.createdAt);
    QVERIFY(out->updatedAt.isValid());
    QCOMPARE(out->iteration, in.iteration);
    QCOMPARE(out->metric, in.metric);
    QCOMPARE(out->baselineScore, in.baselineScore);
    QCOMPARE(out->bestScore, in.bestScore);
    QCOMPARE(out->usd, in.usd);
    QCOMPARE(out->tokensIn, in.tokensIn);
    QCOMPARE(out->tokensOut, in.tokensOut);
    QCOMPARE(out->llmCalls, in.llmCalls);
    QCOMPARE(out->speedup(), 12.5 / 3.25);

    RunInfo changed = *out;
    changed.state = RunState::Finished;
    changed.iteration = 8;
    changed.bestScore = 2.5;
    QVERIFY(store->updateRun(changed));
    QCOMPARE(toString(store->run(id)->state), toString(RunState::Finished));
    QCOMPARE(store->run(id)->iteration, 8);
    QCOMPARE(store->run(id)->bestScore, 2.5);
    QCOMPARE(store->runs().size(), 1);
    QVERIFY(!store->run(id + 100));
}

void TestRunStore::candidateRoundTrip_data()
{
    QTest::addColumn<Candidate>("candidate");

    Candidate root;
    root.origin = CandidateOrigin::Root;
    root.status = CandidateStatus::Correct;
    root.code = u"extern \"C\" void gemm() {}\n"_s;
    root.score = 12.5;
    root.metrics = QJsonObject{{u"latency_ms"_s, QJsonObject{{u"median"_s, 12.5}, {u"n"_s, 57}}}, {u"gflops"_s, 88.1}};
    root.feedback = {u"D1 miss rate 12%"_s, u"loop at line 14 not vectorized: \"unsupported\""_s};
    QTest::newRow("root with metrics and feedback") << root;

    Candidate failed;
    failed.origin = CandidateOrigin::Fix;
    failed.status = CandidateStatus::CompileError;
    failed.plan = u"Chosen optimization: 3. Vectorize\nplan text"_s;
    failed.menuItem = u"Vectorize the innermost loop"_s;
    failed.code = u"broken("_s;
    failed.score = NaN;
    failed.error = u"error: expected ')'"_s;
    failed.flags = {u"speedup above roofline bound"_s};
    failed.planModel = u"openai::gpt-5.2"_s;
    failed.codeModel = u"vllm::qwen"_s;
    QTest::newRow("NaN score is no score") << failed;

    Candidate planning;
    planning.status = CandidateStatus::Planning;
    planning.origin = CandidateOrigin::Human;
    planning.inBeam = true;
    planning.code = u"unicode: \u00b5s \u2192 \U0001F680"_s;
    QTest::newRow("planning, in beam, unicode") << planning;
}

void TestRunStore::candidateRoundTrip()
{
    QFETCH(Candidate, candidate);
    auto store = openStore(u"runs.sqlite"_s);
    QVERIFY(store);
    const qint64 runId = store->createRun(sampleRun());
    QVERIFY(runId > 0);
    Candidate root = makeCandidate(runId, 0, u"root"_s);
    const qint64 rootId = store->addCandidate(root);
    QVERIFY(rootId > 0);

    candidate.runId = runId;
    candidate.parentId = candidate.origin == CandidateOrigin::Root ? 0 : rootId;
    const qint64 id = store->addCandidate(candidate);
    QVERIFY2(id > 0, qPrintable(store->lastError()));
    const auto out = store->candidate(id);
    QVERIFY(out);
    QCOMPARE(out->id, id);
    compareCandidates(*out, candidate);

    const QList<Candidate> all = store->candidates(runId);
    QCOMPARE(all.size(), 2);
    QCOMPARE(all.at(1).id, id);
    compareCandidates(all.at(1), candidate);
}

void TestRunStore::updateCandidateKeepsId()
{
    auto store = openStore(u"runs.sqlite"_s);
    QVERIFY(store);
    const qint64 runId = store->createRun(sampleRun());
    Candidate c = makeCandidate(runId, 0, u"v1"_s);
    c.status = CandidateStatus::Pending;
    c.score = NaN;
    c.id = store->addCandidate(c);
    QVERIFY(c.id > 0);
    c.status = CandidateStatus::Correct;
    c.score = 4.5;
    c.metrics = QJsonObject{{u"latency_ms"_s, 4.5}};
    QVERIFY(store->updateCandidate(c));
    const auto out = store->candidate(c.id);
    QVERIFY(out);
    QCOMPARE(toString(out->status), toString(CandidateStatus::Correct));
    QCOMPARE(out->score, 4.5);
    QCOMPARE(store->candidates(runId).size(), 1);
}

void TestRunStore::llmCallsAndPlanLink()
{
    auto store = openStore(u"runs.sqlite"_s);
    QVERIFY(store);
    const qint64 runId = store->createRun(sampleRun());
    const qint64 rootId = store->addCandidate(makeCandidate(runId, 0, u"root"_s));

    // One plan, two code samples: both candidates show the plan call that wrote their plan.
    Candidate first = makeCandidate(runId, rootId, u"sample 1"_s);
    first.id = store->addCandidate(first);
    Candidate second = makeCandidate(runId, rootId, u"sample 2"_s);
    second.id = store->addCandidate(second);

    LlmCall plan = makeCall(runId, first.id, u"plan"_s, u"hash-plan"_s, u"ok"_s);
    plan.reasoning = u"thinking about tiles"_s;
    plan.tokensIn = 1000;
    plan.tokensOut = 200;
    plan.usd = 0.0125;
    plan.latencyMs = 1234.5;
    plan.retries = 2;
    plan.attempts = u"attempt 1: HTTP 529: Overloaded - sent again after 0.5 s (the provider answered with an error)\n"
                    u"attempt 2: Connection refused - sent again after 1 s (nothing had reached the provider)"_s;
    plan.createdAt = QDateTime(QDate(2025, 1, 2), QTime(3, 4, 5, 6), Qt::UTC);
    const qint64 planId = store->addLlmCall(plan);
    QVERIFY2(planId > 0, qPrintable(store->lastError()));
    const qint64 code1 = store->addLlmCall(makeCall(runId, first.id, u"code"_s, u"hash-c1"_s, u"ok"_s));
    const qint64 code2 = store->addLlmCall(makeCall(runId, second.id, u"code"_s, u"hash-c2"_s, u"ok"_s));
    QVERIFY(code1 > 0 && code2 > 0);
    first.planCallId = planId;
    second.planCallId = planId;
    QVERIFY(store->updateCandidate(first));
    QVERIFY(store->updateCandidate(second));
    QCOMPARE(store->candidate(second.id)->planCallId, planId);

    const QList<LlmCall> all = store->llmCalls(runId);
    QCOMPARE(all.size(), 3);
    compareCalls(all.at(0), plan);
    QCOMPARE(all.at(0).id, planId);
    QCOMPARE(all.at(0).runId, runId);
    QCOMPARE(all.at(0).candidateId, first.id);
    QCOMPARE(all.at(0).createdAt, plan.createdAt);
    QCOMPARE(all.at(0).attempts, plan.attempts); // every retry is on record, with its reason

    const QList<LlmCall> forSecond = store->llmCallsForCandidate(second.id);
    QCOMPARE(forSecond.size(), 2);
    QCOMPARE(forSecond.at(0).id, planId);
    QCOMPARE(forSecond.at(0).phase, u"plan"_s);
    QCOMPARE(forSecond.at(1).id, code2);
    const QList<LlmCall> forFirst = store->llmCallsForCandidate(first.id);
    QCOMPARE(forFirst.size(), 2); // the plan call is listed once, not twice
    QVERIFY(store->llmCallsForCandidate(rootId).isEmpty());
}

void TestRunStore::evaluationSteps()
{
    auto store = openStore(u"runs.sqlite"_s);
    QVERIFY(store);
    const qint64 runId = store->createRun(sampleRun());
    const qint64 id = store->addCandidate(makeCandidate(runId, 0, u"root"_s));

    EvalResult result;
    StepResult compile;
    compile.name = u"compile"_s;
    compile.command = {u"c++"_s, u"-O3"_s, u"a file with spaces.cpp"_s};
    compile.exitCode = 0;
    compile.durationMs = 812.5;
    compile.log = u"warning: unused variable"_s;
    StepResult bench;
    bench.name = u"bench"_s;
    bench.command = {u"./candidate"_s, u"bench"_s};
    bench.exitCode = -1;
    bench.timedOut = true;
    bench.crashed = false;
    bench.log = u"[killed: exceeded the step's time limit]"_s;
    result.steps = {compile, bench};
    QVERIFY(store->addEvaluation(id, result));

    const QList<StepResult> steps = store->evaluationSteps(id);
    QCOMPARE(steps.size(), 2);
    for (int i = 0; i < 2; ++i) {
        QCOMPARE(steps.at(i).name, result.steps.at(i).name);
        QCOMPARE(steps.at(i).command, result.steps.at(i).command);
        QCOMPARE(steps.at(i).exitCode, result.steps.at(i).exitCode);
        QCOMPARE(steps.at(i).timedOut, result.steps.at(i).timedOut);
        QCOMPARE(steps.at(i).crashed, result.steps.at(i).crashed);
        QCOMPARE(steps.at(i).durationMs, result.steps.at(i).durationMs);
        QCOMPARE(steps.at(i).log, result.steps.at(i).log);
    }
}

void TestRunStore::usageByModelSumsPaidCalls()
{
    auto store = openStore(u"runs.sqlite"_s);
    QVERIFY(store);
    RunInfo run;
    run.target = u"cpu"_s;
    run.problem = u"gemm"_s;
    const qint64 runId = store->createRun(run);
    QVERIFY(runId);
    auto call = [&](const QString &provider, const QString &model, const QString &status, qint64 in, qint64 out,
                    double usd) {
        LlmCall c;
        c.runId = runId;
        c.phase = u"code"_s;
        c.requestHash = QString::number(in) + status;
        c.provider = provider;
        c.model = model;
        c.prompt = u"p"_s;
        c.status = status;
        c.tokensIn = in;
        c.tokensOut = out;
        c.usd = usd;
        c.latencyMs = 10;
        QVERIFY(store->addLlmCall(c));
    };
    call(u"openai"_s, u"gpt-5.2"_s, u"ok"_s, 100, 10, 0.5);
    call(u"openai"_s, u"gpt-5.2"_s, u"error"_s, 50, 0, 0.0);
    call(u"openai"_s, u"gpt-5.2"_s, u"cached"_s, 100, 10, 0.0); // reused: not paid again
    call(u"anthropic"_s, u"claude-opus-4-5"_s, u"ok"_s, 200, 20, 1.5);
    const QList<RunStore::ModelUsage> usage = store->usageByModel(runId);
    QCOMPARE(usage.size(), 2);
    QCOMPARE(usage.at(0).model, u"anthropic::claude-opus-4-5"_s); // most expensive first
    QCOMPARE(usage.at(0).usd, 1.5);
    QCOMPARE(usage.at(1).model, u"openai::gpt-5.2"_s);
    QCOMPARE(usage.at(1).calls, 2);
    QCOMPARE(usage.at(1).failed, 1);
    QCOMPARE(usage.at(1).tokensIn, 150);
    QCOMPARE(usage.at(1).usd, 0.5);
}

void TestRunStore::setBeamReplacesBeam()
{
    auto store = openStore(u"runs.sqlite"_s);
    QVERIFY(store);
    const qint64 runId = store->createRun(sampleRun());
    const qint64 otherRun = store->createRun(sampleRun());
    QList<qint64> ids;
    for (int i = 0; i < 4; ++i)
        ids << store->addCandidate(makeCandidate(runId, 0, QString::number(i)));
    const qint64 foreign = store->addCandidate(makeCandidate(otherRun, 0, u"other"_s));
    QVERIFY(store->setBeam(otherRun, {foreign}));

    auto beam = [&](qint64 run) {
        QList<qint64> out;
        for (const Candidate &c : store->candidates(run))
            if (c.inBeam)
                out << c.id;
        return out;
    };
    QVERIFY(store->setBeam(runId, {ids[0], ids[1]}));
    QCOMPARE(beam(runId), (QList<qint64>{ids[0], ids[1]}));
    QVERIFY(store->setBeam(runId, {ids[1], ids[3]}));
    QCOMPARE(beam(runId), (QList<qint64>{ids[1], ids[3]}));
    // A candidate of another run cannot be put into this run's beam, and the other run's beam is untouched.
    QVERIFY(store->setBeam(runId, {ids[2], foreign}));
    QCOMPARE(beam(runId), QList<qint64>{ids[2]});
    QCOMPARE(beam(otherRun), QList<qint64>{foreign});
}

void TestRunStore::deleteRunRemovesChildren()
{
    auto store = openStore(u"runs.sqlite"_s);
    QVERIFY(store);
    qint64 runIds[2] = {};
    qint64 candidateIds[2] = {};
    for (int i = 0; i < 2; ++i) {
        runIds[i] = store->createRun(sampleRun());
        candidateIds[i] = store->addCandidate(makeCandidate(runIds[i], 0, u"root"_s));
        QVERIFY(store->addLlmCall(makeCall(runIds[i], candidateIds[i], u"plan"_s, u"hash-%1"_s.arg(i), u"ok"_s)) > 0);
        EvalResult result;
        result.steps = {StepResult{u"compile"_s, {u"c++"_s}, 0, false, false, 1.0, u"ok"_s}};
        QVERIFY(store->addEvaluation(candidateIds[i], result));
    }

    QVERIFY(store->deleteRun(runIds[0]));
    QVERIFY(!store->run(runIds[0]));
    QVERIFY(store->candidates(runIds[0]).isEmpty());
    QVERIFY(!store->candidate(candidateIds[0]));
    QVERIFY(store->llmCalls(runIds[0]).isEmpty());
    QVERIFY(!store->cachedResponse(u"hash-0"_s));
    QVERIFY(store->evaluationSteps(candidateIds[0]).isEmpty());

    // The other run is intact.
    QCOMPARE(store->runs().size(), 1);
    QCOMPARE(store->candidates(runIds[1]).size(), 1);
    QCOMPARE(store->llmCalls(runIds[1]).size(), 1);
    QCOMPARE(store->evaluationSteps(candidateIds[1]).size(), 1);
    QVERIFY(store->cachedResponse(u"hash-1"_s));
}

void TestRunStore::cachedResponseFindsOkCallsOnly()
{
    auto store = openStore(u"runs.sqlite"_s);
    QVERIFY(store);
    const qint64 runId = store->createRun(sampleRun());
    QVERIFY(store->addLlmCall(makeCall(runId, 0, u"plan"_s, u"h-failed-then-ok"_s, u"error"_s)) > 0);
    const qint64 okId = store->addLlmCall(makeCall(runId, 0, u"plan"_s, u"h-failed-then-ok"_s, u"ok"_s));
    QVERIFY(store->addLlmCall(makeCall(runId, 0, u"code"_s, u"h-only-failed"_s, u"error"_s)) > 0);

    const auto hit = store->cachedResponse(u"h-failed-then-ok"_s);
    QVERIFY(hit);
    QCOMPARE(hit->id, okId);
    QCOMPARE(hit->status, u"ok"_s);
    QCOMPARE(hit->response, u"response for plan"_s);
    QVERIFY(!store->cachedResponse(u"h-only-failed"_s));
    QVERIFY(!store->cachedResponse(u"never-seen"_s));

    // The cache spans runs: a resumed or repeated run reuses what another run paid for.
    const qint64 laterRun = store->createRun(sampleRun());
    Q_UNUSED(laterRun);
    QCOMPARE(store->cachedResponse(u"h-failed-then-ok"_s)->runId, runId);
}

void TestRunStore::refusesRandomBytes()
{
    const QString path = m_dir->filePath(u"random.sqlite"_s);
    QByteArray bytes(64 * 1024, Qt::Uninitialized);
    QRandomGenerator rng(42);
    for (char &b : bytes)
        b = char(rng.bounded(256));
    {
        QFile file(path);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write(bytes);
    }
    QString error;
    auto store = RunStore::open(path, &error);
    QVERIFY(!store);
    QVERIFY2(error.contains(path), qPrintable(error));
    QVERIFY2(error.contains(u"untouched"_s), qPrintable(error));
    QCOMPARE(fileBytes(path), bytes);
}

void TestRunStore::refusesOtherApplicationsDatabase()
{
    const QString path = m_dir->filePath(u"recipes.sqlite"_s);
    {
        RawDb raw(path);
        QVERIFY(raw.ok());
        QVERIFY(raw.exec(u"CREATE TABLE recipes (id INTEGER PRIMARY KEY, name TEXT)"_s));
        QVERIFY(raw.exec(u"INSERT INTO recipes (name) VALUES ('bread')"_s));
    }
    const QByteArray before = fileBytes(path);
    QVERIFY(!before.isEmpty());

    QString error;
    QVERIFY(!RunStore::open(path, &error));
    QVERIFY2(error.contains(path) && error.contains(u"not an Autocomp Workbench store"_s), qPrintable(error));
    QCOMPARE(fileBytes(path), before);
}

void TestRunStore::refusesNewerSchema()
{
    const QString path = m_dir->filePath(u"future.sqlite"_s);
    {
        QString error;
        auto store = RunStore::open(path, &error);
        QVERIFY2(store, qPrintable(error));
        QVERIFY(store->createRun(sampleRun()) > 0);
    }
    {
        RawDb raw(path);
        QVERIFY(raw.ok());
        QVERIFY(raw.exec(u"UPDATE schema_version SET version = 99"_s));
    }
    const QByteArray before = fileBytes(path);
    QVERIFY(!before.isEmpty());

    QString error;
    QVERIFY(!RunStore::open(path, &error));
    QVERIFY2(error.contains(path) && error.contains(u"99"_s), qPrintable(error));
    QCOMPARE(fileBytes(path), before);
}

void TestRunStore::refusesDirectory()
{
    QString error;
    QVERIFY(!RunStore::open(m_dir->path(), &error));
    QVERIFY2(error.contains(m_dir->path()), qPrintable(error));
}

void TestRunStore::seedStore(const QString &path, const QString &code, const QStringList &feedback, const QString &hash,
                             qint64 *runId, qint64 *candidateId)
{
    QString error;
    auto store = RunStore::open(path, &error);
    QVERIFY2(store, qPrintable(error));
    *runId = store->createRun(sampleRun());
    Candidate c = makeCandidate(*runId, 0, code);
    c.feedback = feedback;
    *candidateId = store->addCandidate(c);
    QVERIFY(store->addLlmCall(makeCall(*runId, *candidateId, u"plan"_s, hash, u"ok"_s)) > 0);
}

void TestRunStore::reopenKeepsData()
{
    const QString path = m_dir->filePath(u"runs.sqlite"_s);
    qint64 runId = 0;
    qint64 candidateId = 0;
    seedStore(path, u"int main() {}"_s, {u"kept across restarts"_s}, u"h"_s, &runId, &candidateId);
    if (QTest::currentTestFailed())
        return;
    QString error;
    auto store = RunStore::open(path, &error);
    QVERIFY2(store, qPrintable(error));
    QCOMPARE(store->runs().size(), 1);
    QCOMPARE(store->run(runId)->problem, u"gemm"_s);
    QCOMPARE(store->candidate(candidateId)->code, u"int main() {}"_s);
    QCOMPARE(store->candidate(candidateId)->feedback, QStringList{u"kept across restarts"_s});
    QVERIFY(store->cachedResponse(u"h"_s));
    // New rows get new ids.
    QVERIFY(store->createRun(sampleRun()) > runId);

    // Two stores on one file (engine thread and GUI thread) see each other's writes.
    auto second = RunStore::open(path, &error);
    QVERIFY2(second, qPrintable(error));
    QCOMPARE(second->runs().size(), 2);
}

// A store written by the previous version (schema 5: no run requests, no lease inbox) opens upgraded, its rows
// as they were, and a lease held by a driver of that version says it takes no requests.
void TestRunStore::upgradesSchema5KeepingData()
{
    const QString path = m_dir->filePath(u"v5.sqlite"_s);
    qint64 runId = 0;
    qint64 candidateId = 0;
    seedStore(path, u"int main() { return 5; }"_s, {}, u"h5"_s, &runId, &candidateId);
    if (QTest::currentTestFailed())
        return;
    {
        // Back to schema 5 as that version left it, with its driver's lease (pid, host, heartbeat only).
        RawDb raw(path);
        QVERIFY(raw.ok());
        QVERIFY(raw.exec(u"DROP TABLE run_requests"_s));
        QVERIFY(raw.exec(u"ALTER TABLE runs DROP COLUMN lease_inbox"_s));
        QVERIFY(raw.exec(u"ALTER TABLE runs DROP COLUMN metric_unit"_s)); // schema 7's
        QVERIFY(raw.exec(u"UPDATE schema_version SET version = 5"_s));
        QVERIFY(raw.exec(
            u"UPDATE runs SET lease_pid = %1, lease_host = '%2', lease_heartbeat = '%3'"_s
                .arg(QCoreApplication::applicationPid())
                .arg(QSysInfo::machineHostName(), QDateTime::currentDateTimeUtc().toString(Qt::ISODateWithMs))));
    }
    QString error;
    auto store = RunStore::open(path, &error);
    QVERIFY2(store, qPrintable(error));
    QCOMPARE(store->run(runId)->problem, u"gemm"_s);
    QCOMPARE(store->candidate(candidateId)->code, u"int main() { return 5; }"_s);
    QVERIFY(store->cachedResponse(u"h5"_s));
    const std::optional<RunLease> lease = store->lease(runId);
    QVERIFY(lease && lease->alive);
    QVERIFY(!lease->takesRequests);
    {
        RawDb raw(path);
        QSqlQuery q(QSqlDatabase::database(raw.name()));
        QVERIFY(q.exec(u"SELECT version FROM schema_version"_s) && q.next());
        QCOMPARE(q.value(0).toInt(), RunStore::SchemaVersion);
    }
    // The new table works on the upgraded store; taking the lease again says it takes requests.
    RunRequest request;
    request.runId = runId;
    request.parentId = candidateId;
    request.text = u"Unroll by 4."_s;
    QVERIFY(store->addRunRequest(request) > 0);
    QVERIFY(store->acquireLease(runId, nullptr));
    QVERIFY(store->lease(runId)->takesRequests);
}

// A store of schema 6 (no metric unit) opens upgraded with its rows as they were; its runs have no unit until
// fillMetricUnits() gives them their target's, which later writes of the run keep.
void TestRunStore::upgradesSchema6AddingMetricUnit()
{
    const QString path = m_dir->filePath(u"v6.sqlite"_s);
    qint64 runId = 0;
    qint64 candidateId = 0;
    {
        auto seeded = openStore(u"v6.sqlite"_s);
        QVERIFY(seeded);
        runId = seeded->createRun(sampleRun());
        Candidate root = makeCandidate(runId, 0, u"int main() { return 6; }"_s);
        root.feedback = {u"kept"_s};
        candidateId = seeded->addCandidate(root);
        QVERIFY(seeded->addLlmCall(makeCall(runId, candidateId, u"plan"_s, u"h6"_s, u"ok"_s)) > 0);
    }
    {
        // Back to schema 6 as that version left it: runs without a unit column.
        RawDb old(path);
        QVERIFY(old.ok() && old.exec(u"ALTER TABLE runs DROP COLUMN metric_unit"_s)
                && old.exec(u"UPDATE schema_version SET version = 6"_s));
    }
    QString error;
    auto store = RunStore::open(path, &error);
    QVERIFY2(store, qPrintable(error));
    const std::optional<RunInfo> before = store->run(runId);
    QVERIFY(before);
    QCOMPARE(before->problem, u"gemm"_s);
    QCOMPARE(before->metric, u"latency_ms"_s);
    QCOMPARE(before->usd, 1.75);
    QVERIFY(before->metricUnit.isEmpty());
    QCOMPARE(store->candidate(candidateId)->code, u"int main() { return 6; }"_s);
    QCOMPARE(store->candidate(candidateId)->feedback, QStringList{u"kept"_s});
    QVERIFY(store->cachedResponse(u"h6"_s));
    RawDb upgraded(path);
    QSqlQuery q(QSqlDatabase::database(upgraded.name()));
    QVERIFY(q.exec(u"SELECT (SELECT version FROM schema_version), "
                   "(SELECT count(*) FROM pragma_table_info('runs') WHERE name = 'metric_unit')"_s)
            && q.next());
    QCOMPARE(q.value(0).toInt(), RunStore::SchemaVersion);
    QCOMPARE(q.value(1).toInt(), 1);
    q.finish();

    // A run whose target says nothing stays without a unit; the others get theirs, without a change of the run.
    const qint64 unknown = store->createRun([] {
        RunInfo run = sampleRun();
        run.target = u"gone"_s;
        return run;
    }());
    QVERIFY(unknown > 0);
    QStringList asked;
    QVERIFY2(store->fillMetricUnits([&](const RunInfo &run) {
        asked << run.target;
        return run.target == u"cpu"_s ? u"ms"_s : QString();
    }),
             qPrintable(store->lastError()));
    QCOMPARE(asked, (QStringList{u"cpu"_s, u"gone"_s}));
    const std::optional<RunInfo> filled = store->run(runId);
    QCOMPARE(filled->metricUnit, u"ms"_s);
    QCOMPARE(filled->updatedAt, before->updatedAt);
    QVERIFY(store->run(unknown)->metricUnit.isEmpty());
    QVERIFY(store->fillMetricUnits([&](const RunInfo &run) { return run.target == u"cpu"_s ? u"s"_s : QString(); }));
    QCOMPARE(store->run(runId)->metricUnit, u"ms"_s);

    // A run read before the fill and written after it keeps the unit.
    RunInfo stale = *before;
    stale.iteration = 4;
    QVERIFY2(store->updateRun(stale), qPrintable(store->lastError()));
    QCOMPARE(store->run(runId)->iteration, 4);
    QCOMPARE(store->run(runId)->metricUnit, u"ms"_s);
}

// The unit a run is created with is stored, read back, exported and imported with it.
void TestRunStore::metricUnitTravelsWithTheRun()
{
    auto source = openStore(u"unit-source.sqlite"_s);
    auto target = openStore(u"unit-target.sqlite"_s);
    QVERIFY(source && target);
    RunInfo run = sampleRun();
    run.metric = u"geomean_us"_s;
    run.metricUnit = u"us"_s;
    const qint64 runId = source->createRun(run);
    QVERIFY2(runId > 0, qPrintable(source->lastError()));
    QCOMPARE(source->run(runId)->metricUnit, u"us"_s);
    QCOMPARE(source->runs().value(0).metricUnit, u"us"_s);

    const QString archive = m_dir->filePath(u"unit.jsonl"_s);
    QString error;
    QVERIFY2(exportRunJsonl(*source, runId, archive, &error), qPrintable(error));
    QVERIFY2(fileBytes(archive).contains(R"("unit":"us")"), fileBytes(archive).constData());
    const qint64 imported = importRunJsonl(*target, archive, &error);
    QVERIFY2(imported > 0, qPrintable(error));
    QCOMPARE(target->run(imported)->metricUnit, u"us"_s);

    // The same through an Autocomp output directory (run_metadata.json's autocomp_workbench.unit).
    QVERIFY(source->addCandidate(makeCandidate(runId, 0, u"int main() {}"_s)) > 0);
    const QString dir = m_dir->filePath(u"unit-autocomp"_s);
    QVERIFY2(exportAutocompDir(*source, runId, dir, &error), qPrintable(error));
    const qint64 fromDir = importAutocompDir(*target, dir, &error);
    QVERIFY2(fromDir > 0, qPrintable(error));
    QCOMPARE(target->run(fromDir)->metricUnit, u"us"_s);
}

// A read that fails (here: a table gone behind the store's back) is reported, not taken for "none".
void TestRunStore::failedReadIsNotAnEmptyAnswer()
{
    const QString path = m_dir->filePath(u"failing-read.sqlite"_s);
    auto store = RunStore::open(path, nullptr);
    QVERIFY(store);
    const qint64 runId = store->createRun(sampleRun());
    QVERIFY(runId > 0);
    QVERIFY(store->llmCalls(runId).isEmpty());
    QVERIFY(!store->readFailed());
    QVERIFY(store->lastError().isEmpty());
    {
        RawDb raw(path);
        QVERIFY(raw.ok());
        QVERIFY(raw.exec(u"DROP TABLE llm_calls"_s));
    }
    QVERIFY(store->llmCalls(runId, u"plan"_s).isEmpty());
    QVERIFY(store->readFailed());
    QVERIFY2(store->lastError().contains(u"llm_calls"_s), qPrintable(store->lastError()));
    QVERIFY(store->unconfirmedCalls(runId).isEmpty());
    QVERIFY(store->readFailed());
    // The next read that works says so.
    QCOMPARE(store->run(runId)->problem, u"gemm"_s);
    QVERIFY(!store->readFailed());
}

// A request is pending until its driver settles it, once: taken (with the candidate it made) or refused (with the
// reason); nothing is deleted. A new driver refuses what was left pending for the previous one.
void TestRunStore::runRequestsAreSettledOnce()
{
    auto store = openStore(u"requests.sqlite"_s);
    QVERIFY(store);
    const qint64 runId = store->createRun(sampleRun());
    const qint64 root = store->addCandidate(makeCandidate(runId, 0, u"int main() {}"_s));
    RunRequest plan;
    plan.runId = runId;
    plan.kind = RunRequest::Kind::Plan;
    plan.parentId = root;
    plan.text = u"Vectorize the inner loop."_s;
    const qint64 planId = store->addRunRequest(plan);
    RunRequest code = plan;
    code.kind = RunRequest::Kind::Code;
    code.text = u"int main() { /* edited */ }"_s;
    const qint64 codeId = store->addRunRequest(code);
    QVERIFY(planId > 0 && codeId > planId);

    QList<RunRequest> pending = store->pendingRunRequests(runId);
    QCOMPARE(pending.size(), 2);
    QCOMPARE(pending.at(0).text, plan.text);
    QCOMPARE(pending.at(0).kind, RunRequest::Kind::Plan);
    QCOMPARE(pending.at(1).kind, RunRequest::Kind::Code);
    QCOMPARE(pending.at(1).fromPid, QCoreApplication::applicationPid());
    QCOMPARE(pending.at(1).fromHost, QSysInfo::machineHostName());
    QVERIFY(pending.at(0).createdAt.isValid());

    const qint64 made = store->addCandidate(makeCandidate(runId, root, u"int main() { /* v */ }"_s));
    QVERIFY(store->settleRunRequest(planId, made, {}));
    QVERIFY2(!store->settleRunRequest(planId, 0, u"again"_s), "a request is settled once");
    QCOMPARE(store->pendingRunRequests(runId).size(), 1);
    const RunRequest taken = *store->runRequest(planId);
    QCOMPARE(taken.state, RunRequest::State::Taken);
    QCOMPARE(taken.candidateId, made);
    QVERIFY(taken.handledAt.isValid());
    QCOMPARE(store->runRequests(planId).size(), 2);

    // Left pending by a driver that is gone: the next driver refuses it when it takes the lease.
    {
        RawDb raw(store->path());
        QVERIFY(raw.exec(
            u"UPDATE runs SET lease_pid = 999999, lease_host = 'elsewhere', lease_heartbeat = '2000-01-01T00:00:00.000Z'"_s));
    }
    QVERIFY(store->acquireLease(runId, nullptr));
    const RunRequest refused = *store->runRequest(codeId);
    QCOMPARE(refused.state, RunRequest::State::Refused);
    QVERIFY2(refused.reason.contains(u"ended before taking it"_s), qPrintable(refused.reason));
    QCOMPARE(refused.text, code.text);
    QVERIFY(store->pendingRunRequests(runId).isEmpty());

    // Deleting the run deletes its requests with it.
    QVERIFY(store->deleteRun(runId));
    QVERIFY(store->runRequests(0).isEmpty());
}

void TestRunStore::exportImportReproducesRun()
{
    auto source = openStore(u"source.sqlite"_s);
    QVERIFY(source);
    RunInfo run = sampleRun();
    const qint64 runId = source->createRun(run);

    Candidate root = makeCandidate(runId, 0, u"root code"_s);
    root.score = 12.5;
    root.metrics = QJsonObject{{u"latency_ms"_s, QJsonObject{{u"median"_s, 12.5}}}};
    root.id = source->addCandidate(root);
    Candidate child = makeCandidate(runId, root.id, u"child code"_s);
    child.plan = u"tile it"_s;
    child.menuItem = u"Tile the loops"_s;
    child.score = 3.25;
    child.feedback = {u"vectorized"_s};
    child.inBeam = true;
    child.id = source->addCandidate(child);
    Candidate broken = makeCandidate(runId, child.id, u"broken code"_s);
    broken.status = CandidateStatus::CompileError;
    broken.score = NaN;
    broken.error = u"expected ';'"_s;
    broken.id = source->addCandidate(broken);

    LlmCall plan = makeCall(runId, child.id, u"plan"_s, u"hash-plan"_s, u"ok"_s);
    plan.tokensIn = 10;
    plan.usd = 0.5;
    const qint64 planId = source->addLlmCall(plan);
    source->addLlmCall(makeCall(runId, child.id, u"code"_s, u"hash-code"_s, u"ok"_s));
    source->addLlmCall(makeCall(runId, broken.id, u"code"_s, u"hash-broken"_s, u"error"_s));
    child.planCallId = planId;
    broken.planCallId = planId;
    QVERIFY(source->updateCandidate(child));
    QVERIFY(source->updateCandidate(broken));
    EvalResult eval;
    eval.steps = {StepResult{u"compile"_s, {u"c++"_s, u"x.cpp"_s}, 1, false, false, 5.0, u"error: expected ';'"_s}};
    QVERIFY(source->addEvaluation(broken.id, eval));
    run.id = runId;
    run.bestCandidateId = child.id;
    QVERIFY(source->updateRun(run));

    const QString archive = m_dir->filePath(u"run.jsonl"_s);
    QString error;
    QVERIFY2(exportRunJsonl(*source, runId, archive, &error), qPrintable(error));

    // The target store already has rows, so imported ids cannot coincide with the archive's.
    auto target = openStore(u"target.sqlite"_s);
    QVERIFY(target);
    const qint64 existing = target->createRun(sampleRun());
    for (int i = 0; i < 5; ++i)
        target->addCandidate(makeCandidate(existing, 0, u"filler"_s));
    for (int i = 0; i < 7; ++i)
        target->addLlmCall(makeCall(existing, 0, u"plan"_s, u"filler-%1"_s.arg(i), u"ok"_s));

    const qint64 imported = importRunJsonl(*target, archive, &error);
    QVERIFY2(imported > 0, qPrintable(error));
    QVERIFY(imported != existing);
    const auto importedRun = target->run(imported);
    QVERIFY(importedRun);
    QCOMPARE(importedRun->problem, run.problem);
    QCOMPARE(importedRun->configYaml, run.configYaml);
    QCOMPARE(toString(importedRun->state), toString(run.state));
    QCOMPARE(importedRun->createdAt, run.createdAt);
    QCOMPARE(importedRun->bestScore, run.bestScore);
    QCOMPARE(importedRun->usd, run.usd);

    const QList<Candidate> candidates = target->candidates(imported);
    QCOMPARE(candidates.size(), 3);
    const Candidate &newRoot = candidates.at(0);
    const Candidate &newChild = candidates.at(1);
    const Candidate &newBroken = candidates.at(2);
    QCOMPARE(newRoot.code, root.code);
    QCOMPARE(newChild.code, child.code);
    QCOMPARE(newBroken.code, broken.code);
    QVERIFY(newRoot.id != root.id);
    QCOMPARE(newRoot.parentId, qint64(0));
    QCOMPARE(newChild.parentId, newRoot.id);
    QCOMPARE(newBroken.parentId, newChild.id);
    QCOMPARE(importedRun->bestCandidateId, newChild.id);
    for (Candidate expected : {root, child, broken}) {
        const Candidate &actual = candidates.at(expected.id == root.id ? 0 : expected.id == child.id ? 1 : 2);
        expected.runId = imported;
        expected.parentId = actual.parentId;
        compareCandidates(actual, expected);
        if (QTest::currentTestFailed())
            return;
    }

    const QList<LlmCall> calls = target->llmCalls(imported);
    QCOMPARE(calls.size(), 3);
    compareCalls(calls.at(0), plan);
    QCOMPARE(calls.at(0).candidateId, newChild.id);
    QCOMPARE(calls.at(2).candidateId, newBroken.id);
    QCOMPARE(newChild.planCallId, calls.at(0).id);
    QCOMPARE(newBroken.planCallId, calls.at(0).id);
    const QList<LlmCall> forBroken = target->llmCallsForCandidate(newBroken.id);
    QCOMPARE(forBroken.size(), 2);
    QCOMPARE(forBroken.at(0).phase, u"plan"_s);

    const QList<StepResult> steps = target->evaluationSteps(newBroken.id);
    QCOMPARE(steps.size(), 1);
    QCOMPARE(steps.at(0).command, eval.steps.at(0).command);
    QCOMPARE(steps.at(0).exitCode, 1);
    QCOMPARE(steps.at(0).log, eval.steps.at(0).log);

    // The filler run is untouched.
    QCOMPARE(target->candidates(existing).size(), 5);
    QCOMPARE(target->llmCalls(existing).size(), 7);
}

void TestRunStore::importBadLineLeavesNothing_data()
{
    QTest::addColumn<int>("badLine");
    QTest::addColumn<QByteArray>("replacement");
    QTest::addColumn<QString>("mentions");

    QTest::newRow("truncated JSON after the calls")
        << 6 << QByteArray("{\"type\": \"llm_call\", \"id\": ") << u"JSON"_s;
    QTest::newRow("garbage after candidates") << 3 << QByteArray("this is not json") << u"JSON"_s;
    QTest::newRow("unknown line type") << 4 << QByteArray("{\"type\": \"mystery\"}") << u"mystery"_s;
}

void TestRunStore::importBadLineLeavesNothing()
{
    QFETCH(int, badLine);
    QFETCH(QByteArray, replacement);
    QFETCH(QString, mentions);

    auto source = openStore(u"source.sqlite"_s);
    QVERIFY(source);
    const qint64 runId = source->createRun(sampleRun());
    const qint64 root = source->addCandidate(makeCandidate(runId, 0, u"root"_s));
    const qint64 child = source->addCandidate(makeCandidate(runId, root, u"child"_s));
    source->addLlmCall(makeCall(runId, child, u"plan"_s, u"archived-plan"_s, u"ok"_s));
    source->addLlmCall(makeCall(runId, child, u"code"_s, u"archived-code"_s, u"ok"_s));
    source->addLlmCall(makeCall(runId, child, u"code"_s, u"archived-code-2"_s, u"ok"_s));
    const QString archive = m_dir->filePath(u"run.jsonl"_s);
    QString error;
    QVERIFY2(exportRunJsonl(*source, runId, archive, &error), qPrintable(error));

    QList<QByteArray> lines = fileBytes(archive).split('\n');
    QVERIFY2(lines.size() > badLine, "the archive has fewer lines than the test expects");
    lines[badLine - 1] = replacement;
    {
        QFile file(archive);
        QVERIFY(file.open(QIODevice::WriteOnly | QIODevice::Truncate));
        file.write(lines.join('\n'));
    }

    auto target = openStore(u"target.sqlite"_s);
    QVERIFY(target);
    const qint64 existing = target->createRun(sampleRun());
    error.clear();
    QCOMPARE(importRunJsonl(*target, archive, &error), qint64(0));
    const QString where = archive + u':' + QString::number(badLine) + u':';
    QVERIFY2(error.contains(where) && error.contains(mentions), qPrintable(u"expected '%1' in: "_s.arg(where) + error));

    // Nothing of the half-read archive stays: no run, and no cached response a later run could pick up.
    QCOMPARE(target->runs().size(), 1);
    QCOMPARE(target->runs().first().id, existing);
    QVERIFY(!target->cachedResponse(u"archived-plan"_s));
    QVERIFY(!target->cachedResponse(u"archived-code"_s));
}

QTEST_GUILESS_MAIN(TestRunStore)
#include "tst_run_store.moc"
