// Agent folders in Autocomp's format, as its agent builder writes them (agent_name/built_at/build in
// agent_config.yaml, `strategies:` in translation_menu.yaml), through the loader and `autocomp agents import`.
// The fixture, tests/integration/data/autocomp_format_agent/demo-rvv, is written here in that layout.
//
//   - the folder loads as it is; keys Autocomp writes are accepted, a key nobody writes and a malformed
//     menu entry are errors naming the file and line;
//   - `agents import` copies it into the user's data directory, reports each file, the target it fits
//     (rvv) and a prompt preview; a folder that cannot load exits 1 naming file:line and copies nothing;
//   - the imported agent drives a whole `autocomp run` on the rvv target against the local LLM server, its
//     `strategies:` translation menu in the plan prompts (skips, saying why, where rvv is absent).
#include "cli_outcome.h"
#include "fake_llm_server.h"
#include "catalog/repository.h"
#include "store/run_store.h"

#include <QDir>
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

using namespace autocomp;

class TestAutocompAgents : public QObject
{
    Q_OBJECT

    static QString fixture()
    {
        return qEnvironmentVariable("AUTOCOMP_TEST_DATA")
            + QStringLiteral("/integration/data/autocomp_format_agent/demo-rvv");
    }

    static bool copyFolder(const QString &from, const QString &to)
    {
        if (!QDir().mkpath(to))
            return false;
        for (const QString &file : QDir(from).entryList(QDir::Files))
            if (!QFile::copy(from + QLatin1Char('/') + file, to + QLatin1Char('/') + file))
                return false;
        return true;
    }

    static bool write(const QString &path, const QByteArray &text)
    {
        QFile f(path);
        QFile::remove(path);
        return f.open(QIODevice::WriteOnly) && f.write(text) == text.size();
    }

    struct Cli
    {
        int exitCode = -1;
        QString out;
        QString err;
    };

    // The CLI with this test's own data home (the user's data directory of `agents import`).
    Cli cli(const QStringList &arguments, const QProcessEnvironment &extra = {})
    {
        QProcess process;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("XDG_DATA_HOME"), m_home.path());
        for (const QString &key : extra.keys())
            env.insert(key, extra.value(key));
        process.setProcessEnvironment(env);
        process.start(qEnvironmentVariable("AUTOCOMP_CLI"), arguments);
        if (!process.waitForFinished(120000))
            return {};
        return {process.exitCode(), QString::fromUtf8(process.readAllStandardOutput()),
                QString::fromUtf8(process.readAllStandardError())};
    }

    QTemporaryDir m_home;

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_home.isValid());
        QVERIFY2(QFileInfo(qEnvironmentVariable("AUTOCOMP_CLI")).isExecutable(),
                 "AUTOCOMP_CLI must name the built autocomp binary");
    }

    void autocompFormatLoadsAsItIs()
    {
        QString error;
        const auto agent = Repository::loadAgent(fixture(), &error);
        QVERIFY2(agent, qPrintable(error));
        QCOMPARE(agent->name, QStringLiteral("demo-rvv")); // agent_name
        QCOMPARE(agent->version, QStringLiteral("1.0"));
        QCOMPARE(agent->menu.size(), 5);
        QCOMPARE(agent->translationMenu,
                 (QStringList{
                     QStringLiteral("Rewrite the innermost scalar loop as a vsetvl strip-mined loop of RVV intrinsics"),
                     QStringLiteral("Replace scalar multiply-accumulate chains with vfmacc on whole vectors")}));
        QCOMPARE(agent->rulesGeneral.size(), 2);
        QCOMPARE(agent->rulesPlanning.size(), 1);
        QCOMPARE(agent->rulesCoding.size(), 2);
        QCOMPARE(agent->codeExamples.size(), 1);
        QCOMPARE(agent->codeExamples.first().name, QStringLiteral("Strip-mined scaled add"));
        QVERIFY(agent->isaDocs.contains(QStringLiteral("__riscv_vfmacc_vf_f32m1")));
    }

    void badInputNamesFileAndLine_data()
    {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QByteArray>("text");
        QTest::addColumn<QString>("expected");
        QTest::newRow("unknown config key")
            << QStringLiteral("agent_config.yaml") << QByteArray("agent_name: x\nversion: '1'\nbuilt_by: someone\n")
            << QStringLiteral("agent_config.yaml:3:");
        QTest::newRow("menu entry not a strategy")
            << QStringLiteral("translation_menu.yaml") << QByteArray("strategies:\n- strategy: fine\n- {steps: 2}\n")
            << QStringLiteral("translation_menu.yaml:3:");
        QTest::newRow("both keys") << QStringLiteral("optimization_menu.yaml")
                                   << QByteArray("optimizations:\n- strategy: a\nstrategies:\n- strategy: b\n")
                                   << QStringLiteral("optimization_menu.yaml:4:");
        QTest::newRow("no menu key") << QStringLiteral("optimization_menu.yaml") << QByteArray("menu:\n- strategy: a\n")
                                     << QStringLiteral("optimization_menu.yaml:1:");
    }
    void badInputNamesFileAndLine()
    {
        QFETCH(QString, file);
        QFETCH(QByteArray, text);
        QFETCH(QString, expected);
        QTemporaryDir dir;
        const QString agentDir = dir.filePath(QStringLiteral("broken"));
        QVERIFY(copyFolder(fixture(), agentDir));
        QVERIFY(write(agentDir + QLatin1Char('/') + file, text));
        QString error;
        QVERIFY(!Repository::loadAgent(agentDir, &error));
        QVERIFY2(error.contains(expected), qPrintable(error));

        // The import refuses it the same way, exits 1 and copies nothing.
        const Cli r = cli({QStringLiteral("agents"), QStringLiteral("import"), agentDir, QStringLiteral("--name"),
                           QStringLiteral("broken-one")});
        QCOMPARE(r.exitCode, 1);
        QVERIFY2(r.err.contains(expected), qPrintable(r.err));
        QVERIFY(!QFileInfo::exists(m_home.filePath(QStringLiteral("autocomp-workbench/agents/broken-one"))));
    }

    void unclosedExampleIsRefusedWithItsLine()
    {
        QTemporaryDir dir;
        const QString agentDir = dir.filePath(QStringLiteral("unclosed"));
        QVERIFY(copyFolder(fixture(), agentDir));
        QVERIFY(write(agentDir + QStringLiteral("/code_examples.md"), "## One\n\nSUMMARY: s\n\n```c\nint x;\n"));
        const Cli r = cli({QStringLiteral("agents"), QStringLiteral("import"), agentDir});
        QCOMPARE(r.exitCode, 1);
        QVERIFY2(r.err.contains(QStringLiteral("code_examples.md:5:")), qPrintable(r.err));
    }

    void importCopiesChecksAndSaysTheTarget()
    {
        const Cli r = cli({QStringLiteral("agents"), QStringLiteral("import"), fixture()});
        QVERIFY2(r.exitCode == 0, qPrintable(r.err));
        const QString installed = m_home.filePath(QStringLiteral("autocomp-workbench/agents/demo-rvv"));
        for (const QString &file : QDir(fixture()).entryList(QDir::Files))
            QVERIFY2(QFileInfo::exists(installed + QLatin1Char('/') + file), qPrintable(file));
        QVERIFY2(r.out.contains(QStringLiteral("translation menu: 2 strategies")), qPrintable(r.out));
        QVERIFY2(r.out.contains(QStringLiteral("target: fits 'rvv'")), qPrintable(r.out));
        QVERIFY2(r.out.contains(QStringLiteral("prompt preview (a plan prompt for rvv/")), qPrintable(r.out));
        QVERIFY(r.out.contains(QStringLiteral("DEMO-VECTOR-UNIT")));
        // Listed with the others; a second import of the same name needs --overwrite.
        QVERIFY(cli({QStringLiteral("agents")}).out.contains(QStringLiteral("demo-rvv")));
        const Cli again = cli({QStringLiteral("agents"), QStringLiteral("import"), fixture()});
        QCOMPARE(again.exitCode, 2);
        QVERIFY2(again.err.contains(QStringLiteral("--overwrite")), qPrintable(again.err));
        QCOMPARE(cli({QStringLiteral("agents"), QStringLiteral("import"), fixture(), QStringLiteral("--overwrite")})
                     .exitCode,
                 0);
    }

    // The imported agent on the rvv target, a translation iteration with its `strategies:` menu then an
    // optimization iteration, against the local LLM server.
    void importedAgentRunsOnRvv()
    {
        Repository repository(QStringList{qEnvironmentVariable("AUTOCOMP_DATA_DIR")});
        QString error;
        const auto target = repository.target(QStringLiteral("rvv"), &error);
        QVERIFY2(target, qPrintable(error));
        if (!target->available())
            QSKIP(
                qPrintable(target->absenceReason() + QStringLiteral(" (packaging/install-deps.sh --rvv installs it)")));
        QCOMPARE(cli({QStringLiteral("agents"), QStringLiteral("import"), fixture(), QStringLiteral("--overwrite")})
                     .exitCode,
                 0);

        test::FakeLlmServer server;
        QVERIFY(server.listen());
        const QString data = qEnvironmentVariable("AUTOCOMP_TEST_DATA") + QStringLiteral("/integration/data/");
        const QByteArray script = "rules:\n"
                                  "  - name: code\n    match: 'Optimized code:\\s*$'\n    cycle: true\n    responses:\n"
                                  "      - content_file: rvv/gemm_vectorized.md\n"
                                  "  - name: plan\n    match: 'Plan:\\s*$'\n    cycle: true\n    responses:\n"
                                  "      - content_file: rvv/plan_vectorize.md\n";
        QVERIFY2(server.loadScriptText(script, data, &error), qPrintable(error));
        QTemporaryDir dir;
        const QString config = dir.filePath(QStringLiteral("run.yaml"));
        QVERIFY(write(config,
                      "target: rvv\nproblem: gemm\nagent: demo-rvv\nmodels: {plan: [\"vllm::scripted-model\"]}\n"
                      "search: {iterations: 2, beam_width: 1, plans_per_parent: 1, code_per_plan: 1, menu_dropout: "
                      "0.0, fix_attempts: 0,\n"
                      "         translate_iters: 1, translate_score: false}\n"
                      "budget: {max_llm_calls: 10}\n"));
        const QString storePath = dir.filePath(QStringLiteral("runs.sqlite"));
        QProcess process;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("XDG_DATA_HOME"), m_home.path());
        env.insert(QStringLiteral("VLLM_API_BASE"), server.baseUrl().toString() + QStringLiteral("/v1"));
        process.setProcessEnvironment(env);
        QSignalSpy finished(&process, &QProcess::finished);
        process.start(qEnvironmentVariable("AUTOCOMP_CLI"),
                      {QStringLiteral("run"), config, QStringLiteral("--store"), storePath, QStringLiteral("--json")});
        QVERIFY(process.waitForStarted(10000));
        QVERIFY(finished.wait(600000)); // this thread's event loop serves the LLM server meanwhile
        const QByteArray out = process.readAllStandardOutput();
        QVERIFY2(process.exitCode() == 0, process.readAllStandardError().constData());
        const QJsonObject summary = QJsonDocument::fromJson(out).object();
        QCOMPARE(summary.value(QStringLiteral("state")).toString(), QStringLiteral("finished"));
        QVERIFY2(summary.value(QStringLiteral("best_score")).toDouble() * 10
                     <= summary.value(QStringLiteral("baseline_score")).toDouble(),
                 out.constData());

        QStringList plans;
        for (const test::RecordedRequest &r : server.requests())
            if (r.ruleName == QLatin1String("plan"))
                plans << r.lastUserMessage;
        QCOMPARE(plans.size(), 2);
        // Iteration 1 translates with the `strategies:` menu, iteration 2 optimizes with the agent's menu;
        // both carry the agent's architecture and ISA.
        QVERIFY(plans.at(0).contains(QStringLiteral("## Translation menu\n\n1. Rewrite the innermost scalar loop")));
        QVERIFY(plans.at(1).contains(QStringLiteral("## Optimization menu\n\n1. strip-mine the loop with vsetvl")));
        for (const QString &p : std::as_const(plans)) {
            QVERIFY(p.contains(QStringLiteral("DEMO-VECTOR-UNIT")));
            QVERIFY(p.contains(QStringLiteral("__riscv_vfmacc_vf_f32m1")));
        }
        auto store = RunStore::open(storePath, &error);
        QVERIFY2(store, qPrintable(error));
        QCOMPARE(store->run(summary.value(QStringLiteral("run_id")).toInteger())->agent, QStringLiteral("demo-rvv"));
    }
};

QTEST_GUILESS_MAIN(TestAutocompAgents)
#include "tst_autocomp_agents.moc"
