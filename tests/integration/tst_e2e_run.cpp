// The whole loop, end to end, with real parts: the `autocomp` CLI runs a search against the local LLM
// server (OpenAI wire protocol), compiles and times real GEMM candidates, and records everything in a
// real SQLite store. Assertions are read back from the store and from the server's request log.
#include "fake_llm_server.h"
#include "store/run_store.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRegularExpression>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

using namespace autocomp;

class TestE2ERun : public QObject
{
    Q_OBJECT

private:
    struct CliResult
    {
        int exitCode = -1;
        QByteArray out;
        QByteArray err;
    };

    // Runs the CLI while this thread's event loop keeps serving the in-process LLM server.
    CliResult runCli(const QStringList &args, const QProcessEnvironment &env, int timeoutMs = 300000)
    {
        QProcess process;
        process.setProcessEnvironment(env);
        QSignalSpy finished(&process, &QProcess::finished);
        process.start(qEnvironmentVariable("AUTOCOMP_CLI"), args);
        if (!process.waitForStarted(10000))
            return {};
        if (!finished.wait(timeoutMs)) {
            process.kill();
            process.waitForFinished();
        }
        return {process.exitCode(), process.readAllStandardOutput(), process.readAllStandardError()};
    }

    QString dataFile(const QString &name) const
    {
        return qEnvironmentVariable("AUTOCOMP_TEST_DATA") + QStringLiteral("/integration/data/") + name;
    }

private Q_SLOTS:
    void runFindsFasterGemmAndRejectsBrokenOnes()
    {
        test::FakeLlmServer server;
        QVERIFY(server.listen());
        QString error;
        QVERIFY2(server.loadScript(dataFile(QStringLiteral("gemm_e2e_script.yaml")), &error), qPrintable(error));

        QTemporaryDir dir;
        QString storePath = dir.filePath(QStringLiteral("runs.sqlite"));
        // Keep the store for the GUI test (CTest fixture) when asked to.
        const QString keep = qEnvironmentVariable("AUTOCOMP_E2E_STORE_OUT");
        if (!keep.isEmpty()) {
            QFile::remove(keep);
            QFile::remove(keep + QStringLiteral("-wal"));
            QFile::remove(keep + QStringLiteral("-shm"));
            storePath = keep;
        }
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("VLLM_API_BASE"), server.baseUrl().toString() + QStringLiteral("/v1"));

        const CliResult result = runCli({QStringLiteral("run"), dataFile(QStringLiteral("gemm_e2e.yaml")),
                                         QStringLiteral("--store"), storePath, QStringLiteral("--json")},
                                        env);
        QVERIFY2(result.exitCode == 0, result.err.constData());

        // The summary on stdout is one JSON object.
        QJsonParseError parseError;
        const QJsonObject summary = QJsonDocument::fromJson(result.out, &parseError).object();
        QVERIFY2(parseError.error == QJsonParseError::NoError, result.out.constData());
        const qint64 runId = summary.value(QStringLiteral("run_id")).toInteger();
        QVERIFY(runId > 0);
        QCOMPARE(summary.value(QStringLiteral("state")).toString(), QStringLiteral("finished"));
        const double speedup = summary.value(QStringLiteral("speedup")).toDouble();
        QVERIFY2(speedup > 1.0, qPrintable(QString::number(speedup)));
        QVERIFY(summary.value(QStringLiteral("baseline_ms")).toDouble()
                > summary.value(QStringLiteral("best_ms")).toDouble());
        // Progress went to stderr.
        QVERIFY(result.err.contains("iteration 1 of 1"));

        auto store = RunStore::open(storePath, &error);
        QVERIFY2(store, qPrintable(error));
        const auto run = store->run(runId);
        QVERIFY(run);
        QCOMPARE(toString(run->state), toString(RunState::Finished));
        QCOMPARE(run->bestCandidateId, summary.value(QStringLiteral("best_candidate")).toInteger());
        QVERIFY(run->configYaml.contains(QStringLiteral("problem: gemm")));

        const QList<Candidate> candidates = store->candidates(runId);
        QCOMPARE(candidates.size(), 4); // root + 3 code samples
        int correctChildren = 0, compileErrors = 0, incorrect = 0;
        for (const Candidate &c : candidates) {
            QVERIFY2(!store->evaluationSteps(c.id).isEmpty(), "every candidate was evaluated and its steps recorded");
            if (c.origin == CandidateOrigin::Root) {
                QCOMPARE(toString(c.status), toString(CandidateStatus::Correct));
                continue;
            }
            QCOMPARE(c.parentId, candidates.first().id);
            QVERIFY(!c.plan.isEmpty());
            QVERIFY2(!c.menuItem.isEmpty(), "the plan names its menu item");
            switch (c.status) {
            case CandidateStatus::Correct:
                ++correctChildren;
                QVERIFY(c.inBeam);
                QCOMPARE(c.id, run->bestCandidateId);
                QVERIFY(c.score < candidates.first().score);
                QVERIFY(c.metrics.value(QStringLiteral("latency_ms")).toObject().value(QStringLiteral("n")).toInt()
                        >= 5);
                break;
            case CandidateStatus::CompileError:
                ++compileErrors;
                QVERIFY(!c.inBeam);
                QVERIFY(!c.hasScore());
                QVERIFY2(c.error.contains(QStringLiteral("error")), qPrintable(c.error)); // the compiler's message
                break;
            case CandidateStatus::Incorrect:
                ++incorrect;
                QVERIFY(!c.inBeam);
                QVERIFY(!c.hasScore());
                QVERIFY2(c.error.contains(QStringLiteral("tolerance"))
                             || c.error.contains(QStringLiteral("mismatch"), Qt::CaseInsensitive),
                         qPrintable(c.error));
                break;
            default: QFAIL(qPrintable(QStringLiteral("unexpected status %1: %2").arg(toString(c.status), c.error)));
            }
        }
        QCOMPARE(correctChildren, 1);
        QCOMPARE(compileErrors, 1);
        QCOMPARE(incorrect, 1);

        // Every LLM response was stored, with the plan call linked to its code samples.
        const QList<LlmCall> calls = store->llmCalls(runId);
        QCOMPARE(calls.size(), 6);
        QCOMPARE(run->llmCalls, 6);
        for (const LlmCall &call : calls) {
            QCOMPARE(call.status, QStringLiteral("ok"));
            QVERIFY(call.tokensIn > 0);
        }

        // The plan prompts carried the parent's measured latency with its unit, and the menu.
        const QList<test::RecordedRequest> requests = server.requests();
        QCOMPARE(requests.size(), 6);
        int planPrompts = 0;
        const QRegularExpression latency(QStringLiteral("latency_ms: median [0-9.]+ ms"));
        for (const test::RecordedRequest &r : requests) {
            if (r.ruleName != QLatin1String("plan"))
                continue;
            ++planPrompts;
            QVERIFY2(latency.match(r.lastUserMessage).hasMatch(), qPrintable(r.lastUserMessage.left(3000)));
            QVERIFY(r.lastUserMessage.contains(QStringLiteral("## Optimization menu")));
            QVERIFY(QRegularExpression(QStringLiteral("\\n\\d+\\. \\S")).match(r.lastUserMessage).hasMatch());
            QVERIFY(r.lastUserMessage.contains(QStringLiteral("phase 1 out of 1")));
        }
        QCOMPARE(planPrompts, 3);
    }

    void evalCommandPrintsResultJson()
    {
        QTemporaryDir dir;
        QFile code(dir.filePath(QStringLiteral("start.cpp")));
        QVERIFY(code.open(QIODevice::WriteOnly));
        QFile start(qEnvironmentVariable("AUTOCOMP_DATA_DIR") + QStringLiteral("/sols/cpu/gemm/gemm_start.cpp"));
        QVERIFY(start.open(QIODevice::ReadOnly));
        code.write(start.readAll());
        code.close();
        const CliResult ok = runCli({QStringLiteral("eval"), QStringLiteral("--target"), QStringLiteral("cpu"),
                                     QStringLiteral("--problem"), QStringLiteral("gemm"), QStringLiteral("--code"),
                                     code.fileName(), QStringLiteral("--json")},
                                    QProcessEnvironment::systemEnvironment());
        QVERIFY2(ok.exitCode == 0, ok.err.constData());
        const QJsonObject result = QJsonDocument::fromJson(ok.out).object();
        QCOMPARE(result.value(QStringLiteral("status")).toString(), QStringLiteral("ok"));
        QVERIFY(result.value(QStringLiteral("correct")).toBool());
        QVERIFY(result.value(QStringLiteral("metrics"))
                    .toObject()
                    .value(QStringLiteral("latency_ms"))
                    .toObject()
                    .value(QStringLiteral("median"))
                    .toDouble()
                > 0);

        QFile broken(dir.filePath(QStringLiteral("broken.cpp")));
        QVERIFY(broken.open(QIODevice::WriteOnly));
        broken.write("extern \"C\" void gemm(int M, int N, int K, const float* A, const float* B, float* C) { this is "
                     "not C++ }\n");
        broken.close();
        const CliResult bad = runCli({QStringLiteral("eval"), QStringLiteral("--problem"), QStringLiteral("gemm"),
                                      QStringLiteral("--code"), broken.fileName(), QStringLiteral("--json")},
                                     QProcessEnvironment::systemEnvironment());
        QCOMPARE(bad.exitCode, 3);
        QCOMPARE(QJsonDocument::fromJson(bad.out).object().value(QStringLiteral("status")).toString(),
                 QStringLiteral("compile_error"));
    }

    void badConfigNamesFileAndLine()
    {
        QTemporaryDir dir;
        const QString path = dir.filePath(QStringLiteral("bad.yaml"));
        QFile file(path);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write(
            "target: cpu\nproblem: gemm\nmodels: {plan: [\"vllm::m\"]}\nsearch:\n  iterations: 2\n  beam_widht: 4\n");
        file.close();
        const CliResult result = runCli(
            {QStringLiteral("run"), path, QStringLiteral("--store"), dir.filePath(QStringLiteral("s.sqlite"))},
            QProcessEnvironment::systemEnvironment());
        QCOMPARE(result.exitCode, 1);
        QVERIFY2(result.err.contains(QByteArray(path.toUtf8() + ":6")), result.err.constData());
        QVERIFY(result.err.contains("search.beam_widht"));
        QVERIFY2(!QFile::exists(dir.filePath(QStringLiteral("s.sqlite"))), "a bad config creates no store");
    }
};

QTEST_GUILESS_MAIN(TestE2ERun)
#include "tst_e2e_run.moc"
