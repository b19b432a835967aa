// The agent builder: `autocomp agents build` on documents written here (an architecture text, an ISA page in
// HTML, a PDF of optimization notes made with QPdfWriter, and a document out of scope) against the local
// LLM server with scripted answers. The file set is written and loads as an agent, a killed build resumes
// without asking any answered request again, and a run with the new agent sends prompts that contain it.
#include "agents/agent_builder.h"
#include "agents/html_text.h"
#include "agents/isa_filter.h"
#include "fake_llm_server.h"
#include "llm/llm_client.h"
#include "catalog/repository.h"
#include "catalog/target_scaffold.h"
#include "store/run_store.h"
#ifdef AUTOCOMP_HAVE_POPPLER
#include "pdf/poppler_pdf_reader.h"
#endif

#include <QDir>
#include <QFile>
#include <QPainter>
#include <QPdfWriter>
#include <QProcess>
#include <QRegularExpression>
#include <QSignalSpy>
#include <QSqlDatabase>
#include <QSqlQuery>
#include <QTemporaryDir>
#include <QtTest>

#include <csignal>

using namespace autocomp;

namespace {

void writeFile(const QString &path, const QByteArray &content)
{
    QDir().mkpath(QFileInfo(path).path());
    QFile file(path);
    QVERIFY2(file.open(QIODevice::WriteOnly), qPrintable(path));
    file.write(content);
}

const QString s_archReduced = QStringLiteral(
    "The Zephyr-7 NPU has four tiles; each tile owns a 256 KiB scratchpad and a 16x16 int8 systolic array.");
const QString s_pdfStrategy = QStringLiteral(
    "Double-buffer the scratchpad: compute on one 128 KiB half while zload fills the other");

QByteArray script()
{
    QFile file(qEnvironmentVariable("AUTOCOMP_TEST_DATA")
               + QStringLiteral("/integration/data/agent_builder_script.yaml"));
    if (!file.open(QIODevice::ReadOnly))
        return {};
    return QString::fromUtf8(file.readAll())
        .replace(QStringLiteral("%ARCH%"), s_archReduced)
        .replace(QStringLiteral("%PDF%"), s_pdfStrategy)
        .toUtf8();
}

} // namespace

class TestAgentBuilder : public QObject
{
    Q_OBJECT

    QTemporaryDir m_dir;
    QString m_docs;
    QString m_store;
    QString m_dataHome;

    QProcessEnvironment environment(const test::FakeLlmServer &server) const
    {
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("AUTOCOMP_DATA_DIR"), qEnvironmentVariable("AUTOCOMP_FAKE_DATA"));
        env.insert(QStringLiteral("XDG_DATA_HOME"), m_dataHome);
        env.insert(QStringLiteral("VLLM_API_BASE"), server.baseUrl().toString() + QStringLiteral("/v1"));
        return env;
    }

    // Runs the CLI; with killAt > 0, SIGKILLs it once the server has received that many requests.
    // Returns the exit code, -1 when killed; `output` gets stdout and stderr.
    int runCli(const QStringList &args, test::FakeLlmServer &server, int killAt, QString *output = nullptr)
    {
        QProcess process;
        process.setProcessEnvironment(environment(server));
        process.setProcessChannelMode(QProcess::MergedChannels);
        QSignalSpy finished(&process, &QProcess::finished);
        process.start(qEnvironmentVariable("AUTOCOMP_CLI"), args);
        if (!process.waitForStarted())
            return -2;
        QElapsedTimer clock;
        clock.start();
        while (finished.isEmpty() && clock.elapsed() < 120000) {
            if (killAt > 0 && server.requestCount() >= killAt) {
                ::kill(pid_t(process.processId()), SIGKILL);
                finished.wait(10000);
                if (output)
                    *output = QString::fromUtf8(process.readAll());
                return -1;
            }
            finished.wait(20);
        }
        if (output)
            *output = QString::fromUtf8(process.readAll());
        return process.exitStatus() == QProcess::NormalExit ? process.exitCode() : -3;
    }

    QStringList buildArgs(const QString &name) const
    {
        return {QStringLiteral("agents"),
                QStringLiteral("build"),
                name,
                QStringLiteral("--docs"),
                m_docs,
                QStringLiteral("--scope"),
                QStringLiteral("int8 matrix kernels on the Zephyr-7"),
                QStringLiteral("--model"),
                QStringLiteral("vllm::builder-model"),
                QStringLiteral("--target"),
                QStringLiteral("fake"),
                QStringLiteral("--store"),
                m_store};
    }

private Q_SLOTS:
    void initTestCase()
    {
#ifndef AUTOCOMP_HAVE_POPPLER
        QSKIP("built without Poppler's Qt 6 binding (libpoppler-qt6-dev): the CLI cannot read the test's PDF");
#endif
        QVERIFY(m_dir.isValid());
        m_docs = m_dir.filePath(QStringLiteral("docs"));
        m_store = m_dir.filePath(QStringLiteral("runs.sqlite"));
        m_dataHome = m_dir.filePath(QStringLiteral("data-home"));
        qputenv("XDG_DATA_HOME", m_dataHome.toUtf8()); // this process's user data dir too
        writeFile(m_docs + QStringLiteral("/architecture.txt"),
                  "Zephyr-7 architecture\n\nThe Zephyr-7 NPU has 4 tiles. Each tile has a 256 KiB scratchpad and a "
                  "16x16 int8 "
                  "systolic array fed from the scratchpad at 512 bytes per cycle.\n");
        writeFile(m_docs + QStringLiteral("/isa.html"),
                  "<html><head><title>Zephyr-7 ISA</title><style>p{}</style></head><body><h1>Zephyr-7 ISA</h1>"
                  "<h2>Data movement</h2><p>Loads go through the DMA &amp; land in the scratchpad.</p>"
                  "<h3>zload</h3><pre>zload(dst, src, rows)\n  // rows of 16 bytes</pre>"
                  "<h2>Compute</h2><ul><li>zmma(acc, a, b): 16x16 int8 multiply-accumulate</li></ul></body></html>");
        writeFile(m_docs + QStringLiteral("/notes/lunch.txt"), "Today's cafeteria menu: tomato soup and bread.\n");
        writeFile(m_docs + QStringLiteral("/notes/photo.png"), QByteArray("\x89PNG\r\n\x1a\n", 8));
        // A PDF of optimization notes, made here.
        {
            QPdfWriter pdf(m_docs + QStringLiteral("/optimization_notes.pdf"));
            pdf.setTitle(QStringLiteral("Zephyr-7 optimization notes"));
            QPainter painter(&pdf);
            QFont font = painter.font();
            font.setPointSize(11);
            painter.setFont(font);
            painter.drawText(
                QRect(0, 0, pdf.width(), pdf.height() / 4), Qt::TextWordWrap,
                QStringLiteral("Optimization notes. Split the scratchpad into two 128 KiB halves and compute on one "
                               "while zload fills the other."));
        }
    }

    void htmlReadsAsMarkdown()
    {
        QFile file(m_docs + QStringLiteral("/isa.html"));
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QString html = QString::fromUtf8(file.readAll());
        const QString text = HtmlText::toMarkdown(html);
        QVERIFY2(text.contains(QStringLiteral("## Data movement")), qPrintable(text));
        QVERIFY2(text.contains(QStringLiteral("```\nzload(dst, src, rows)\n  // rows of 16 bytes\n```")),
                 qPrintable(text));
        QVERIFY2(text.contains(QStringLiteral("- zmma(acc, a, b)")), qPrintable(text));
        QVERIFY2(text.contains(QStringLiteral("DMA & land")), qPrintable(text));
        QVERIFY2(!text.contains(QStringLiteral("p{}")), qPrintable(text));
        QCOMPARE(HtmlText::title(html), QStringLiteral("Zephyr-7 ISA"));
        const QList<QUrl> links = HtmlText::links(
            QStringLiteral("<a href='b.html#x'>b</a><a href=\"/c\">c</a><a href=mailto:x@y>m</a>"),
            QUrl(QStringLiteral("http://h/docs/a.html")));
        QCOMPARE(links,
                 (QList<QUrl>{QUrl(QStringLiteral("http://h/docs/b.html")), QUrl(QStringLiteral("http://h/c"))}));
    }

    void isaFilterPieces()
    {
        const QString isa = QStringLiteral(
            "intro dropped\n## Loads\nhow loads work\n### vle32\nloads\n```\n### not an entry\n```\n"
            "### vlse32\nstrided\n## Math\n### vfmacc\nfma\n");
        const QList<IsaFilter::Section> sections = IsaFilter::parse(isa);
        QCOMPARE(sections.size(), 2);
        QCOMPARE(sections.at(0).title, QStringLiteral("Loads"));
        QCOMPARE(sections.at(0).entries.size(), 2);
        QVERIFY(sections.at(0).entries.at(0).body.contains(QStringLiteral("### not an entry")));
        QCOMPARE(IsaFilter::parseNumbers(QStringLiteral("Sections 2, 1 and 9; 2 again"), 2), (QList<int>{2, 1}));
        QCOMPARE(IsaFilter::parseNumbers(QStringLiteral("none"), 2), QList<int>{});
        const QString kept = IsaFilter::assemble(sections, {0}, {{0, {1}}});
        QVERIFY2(kept.startsWith(QStringLiteral(
                     "Only the parts relevant to the current code are shown (kept 1 of 2 sections: Loads).")),
                 qPrintable(kept));
        QVERIFY(kept.contains(QStringLiteral("## Loads\nhow loads work\n### vlse32\nstrided")));
        QVERIFY(!kept.contains(QStringLiteral("vle32\n")));
        QVERIFY(!kept.contains(QStringLiteral("vfmacc")));
    }

    void chunksStayWithinTheLimit()
    {
        QString text;
        for (int i = 0; i < 50; ++i)
            text += QStringLiteral("paragraph %1 ").arg(i).repeated(10) + QStringLiteral("\n\n");
        text += QString(5000, QLatin1Char('x'));
        const QStringList pieces = AgentBuilder::chunks(text, 1000);
        QVERIFY(pieces.size() > 5);
        qsizetype total = 0;
        for (const QString &p : pieces) {
            QVERIFY2(p.size() <= 1000, qPrintable(QString::number(p.size())));
            total += p.count(QLatin1Char('x'));
        }
        QCOMPARE(total, 5000);
    }

    void planIsShownBeforeAnythingIsSent()
    {
        test::FakeLlmServer server;
        QVERIFY(server.listen());
        QString error;
        QVERIFY2(server.loadScriptText(script(), m_dir.path(), &error), qPrintable(error));
        QString output;
        QCOMPARE(runCli(buildArgs(QStringLiteral("zephyr")) << QStringLiteral("--dry-run"), server, 0, &output), 0);
        QCOMPARE(server.requestCount(), 0);
        QVERIFY2(output.contains(QStringLiteral("nothing has been sent yet")), qPrintable(output));
        QVERIFY2(output.contains(QStringLiteral("optimization_notes.pdf  [pdf")), qPrintable(output));
        QVERIFY2(output.contains(QStringLiteral("lunch.txt")), qPrintable(output));
        QVERIFY2(output.contains(QStringLiteral("photo.png: not a text, markdown, HTML or PDF file")),
                 qPrintable(output));
        // Four documents: four filter and four route calls at most, one map each (small), one reduce per file.
        QVERIFY2(output.contains(QStringLiteral("at most 16 (filter 4, route 4, map 4, reduce 4)")),
                 qPrintable(output));
        QVERIFY2(output.contains(QStringLiteral("estimated cost")), qPrintable(output));
        QVERIFY(!QFileInfo::exists(m_dataHome + QStringLiteral("/autocomp-workbench/agents/zephyr")));
    }

    void refusesAShippedAgent()
    {
        test::FakeLlmServer server;
        QVERIFY(server.listen());
        QString output;
        QCOMPARE(runCli(buildArgs(QStringLiteral("fake")), server, 0, &output), 1);
        QVERIFY2(output.contains(QStringLiteral("agent 'fake' is shipped")), qPrintable(output));
        QCOMPARE(server.requestCount(), 0);
    }

    void buildKilledAndResumed()
    {
        test::FakeLlmServer server;
        QVERIFY(server.listen());
        QString error;
        QVERIFY2(server.loadScriptText(script(), m_dir.path(), &error), qPrintable(error));
        // Filter (4) and route (3) and map (3) are answered at once; the reduce answers take 1.5 s, so the kill
        // lands while they are in flight.
        QString output;
        QCOMPARE(runCli(buildArgs(QStringLiteral("zephyr")), server, 11, &output), -1);
        QVERIFY(server.requestCount() >= 11);
        QVERIFY(!QFileInfo::exists(m_dataHome + QStringLiteral("/autocomp-workbench/agents/zephyr/agent_config.yaml")));

        const int code = runCli(buildArgs(QStringLiteral("zephyr")), server, 0, &output);
        QVERIFY2(code == 0, qPrintable(output));
        QVERIFY2(output.contains(QStringLiteral("answered from the store")), qPrintable(output));

        // No answered request went out twice: a request key reaches the server again only when its first
        // answer never arrived (the reduce calls killed in flight).
        QHash<QByteArray, int> sent;
        for (const auto &r : server.requests())
            ++sent[r.header("x-autocomp-request")];
        int resent = 0;
        for (auto it = sent.cbegin(); it != sent.cend(); ++it) {
            QVERIFY(!it.key().isEmpty());
            QVERIFY2(it.value() <= 2, it.key().constData());
            resent += it.value() - 1;
        }
        QVERIFY2(resent >= 1 && resent <= 3, qPrintable(QString::number(resent))); // only reduce calls were cut off
        QCOMPARE(sent.size(), 4 + 3 + 3 + 3); // filter 4, route 3 (lunch.txt left out), map 3, reduce 3
        for (const auto &r : server.requests())
            if (sent.value(r.header("x-autocomp-request")) == 2)
                QVERIFY2(r.ruleName.startsWith(QLatin1String("reduce-")), qPrintable(r.ruleName));
        // The store paid once per request key.
        QHash<QString, int> paid;
        int inFlightLeft = 0;
        // Builder calls belong to no run: read them through a run-less query of the store's own file.
        {
            QSqlDatabase db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"),
                                                        QStringLiteral("agent-builder-check"));
            db.setDatabaseName(m_store);
            QVERIFY(db.open());
            QSqlQuery calls(db);
            QVERIFY(calls.exec(
                QStringLiteral("SELECT request_hash, status, phase FROM llm_calls WHERE phase LIKE 'build:%'")));
            while (calls.next()) {
                if (calls.value(1).toString() == QLatin1String("ok"))
                    ++paid[calls.value(0).toString()];
                inFlightLeft += calls.value(1).toString() == QLatin1String("in_flight");
            }
        }
        QSqlDatabase::removeDatabase(QStringLiteral("agent-builder-check"));
        QCOMPARE(paid.size(), 13);
        for (auto it = paid.cbegin(); it != paid.cend(); ++it)
            QCOMPARE(it.value(), 1);
        QCOMPARE(inFlightLeft, 3); // the killed process's reduce calls stay marked as sent, never answered

        // The PDF's text reached the model.
        bool pdfSeen = false;
        for (const auto &r : server.requests())
            pdfSeen = pdfSeen
                || (r.ruleName == QLatin1String("map-opt") && r.prompt.contains(QStringLiteral("two 128 KiB halves")));
        QVERIFY(pdfSeen);
    }

    // A cancel in this process (the wizard's Cancel Build, the CLI's Ctrl-C) drops the calls still queued in the
    // client, and lets those already handed to the network finish: their answers are stored, and the next
    // build waits for them instead of paying for them again. Counted per request key, so it holds however
    // late the server reads a request sent before the cancel.
    void cancelWaitsForCallsOnTheirWay()
    {
#ifdef AUTOCOMP_HAVE_POPPLER
        PopplerPdfReader::install();
#endif
        test::FakeLlmServer server;
        QVERIFY(server.listen());
        QString error;
        // The reduce answers take 2.5 s: two of them are on their way when the cancel comes, the third waits in
        // the client's queue (two calls at a time).
        QVERIFY2(server.loadScriptText(script().replace("delay_ms: 1500", "delay_ms: 2500"), m_dir.path(), &error),
                 qPrintable(error));
        qputenv("VLLM_API_BASE", (server.baseUrl().toString() + QStringLiteral("/v1")).toUtf8());
        auto store = RunStore::open(m_dir.filePath(QStringLiteral("cancel.sqlite")), &error);
        QVERIFY2(store, qPrintable(error));
        LlmClient client;
        client.setMaxInFlightPerProvider(2);
        AgentBuildOptions options;
        options.name = QStringLiteral("zephyr-cancel");
        options.sources = {m_docs};
        options.scope = QStringLiteral("int8 matrix kernels on the Zephyr-7");
        options.model = QStringLiteral("vllm::builder-model");
        AgentBuilder builder(options, &client, store.get());
        QSignalSpy planReady(&builder, &AgentBuilder::planReady);
        QSignalSpy failed(&builder, &AgentBuilder::failed);
        QSignalSpy finished(&builder, &AgentBuilder::finished);
        builder.collect();
        QTRY_COMPARE_WITH_TIMEOUT(planReady.count(), 1, 20000);
        builder.build();
        QTRY_VERIFY_WITH_TIMEOUT(server.requestCount() >= 4 + 3 + 3 + 1, 20000); // filter, route, map, a reduce call
        QCOMPARE(builder.stage(), AgentBuilder::Stage::Reducing);
        builder.cancel();
        QCOMPARE(failed.count(), 1);
        const QString message = failed.first().first().toString();
        const QRegularExpressionMatch counts =
            QRegularExpression(QStringLiteral("^cancelled; (\\d+) answer\\(s\\) are kept in the store and the next "
                                              "build reuses them; (\\d+) call\\(s\\) already sent"))
                .match(message);
        QVERIFY2(counts.hasMatch(), qPrintable(message));
        const int stored = counts.captured(1).toInt();
        const int onTheWay = counts.captured(2).toInt();
        QCOMPARE(builder.callsOnTheWay(), onTheWay);
        QVERIFY2(onTheWay >= 1, qPrintable(message)); // the one the server has, at least
        QVERIFY2(stored + onTheWay < 13, qPrintable(message)); // a call was still queued, and was dropped
        const int sentBefore = builder.callsSent();
        const int reusedBefore = builder.callsReused();

        builder.build();
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 30000);
        QCOMPARE(builder.callsOnTheWay(), 0);
        QHash<QByteArray, int> received;
        for (const auto &r : server.requests())
            ++received[r.header("x-autocomp-request")];
        for (auto it = received.cbegin(); it != received.cend(); ++it)
            QVERIFY2(it.value() == 1, it.key().constData());
        QCOMPARE(received.size(), 4 + 3 + 3 + 3);
        // The second build reused the stored answers and those on their way, and sent only what never left.
        QCOMPARE(builder.callsReused() - reusedBefore, stored + onTheWay);
        QCOMPARE(builder.callsSent() - sentBefore, 13 - stored - onTheWay);
        QCOMPARE(builder.callsSent(), server.requestCount());
    }

    void builtFilesLoadAsAnAgent()
    {
        const QString dir = m_dataHome + QStringLiteral("/autocomp-workbench/agents/zephyr");
        QString error;
        const std::optional<Agent> agent = Repository::loadAgent(dir, &error);
        QVERIFY2(agent, qPrintable(error));
        QCOMPARE(agent->name, QStringLiteral("zephyr"));
        QCOMPARE(agent->target, QStringLiteral("fake"));
        QCOMPARE(agent->architecture.trimmed(), s_archReduced);
        QVERIFY(agent->isaDocs.startsWith(QStringLiteral("## Data movement\n\n### zload(dst, src, rows)")));
        // The generic strategies, then the extracted ones; one already generic is not repeated.
        QCOMPARE(agent->menu.mid(0, 15), AgentBuilder::genericStrategies());
        QCOMPARE(
            agent->menu.mid(15),
            (QStringList{s_pdfStrategy, QStringLiteral("Keep a 16x16 weight block stationary in the systolic array")}));
        QFile config(dir + QStringLiteral("/agent_config.yaml"));
        QVERIFY(config.open(QIODevice::ReadOnly));
        const QString yaml = QString::fromUtf8(config.readAll());
        QVERIFY2(yaml.contains(QStringLiteral("builder: vllm::builder-model")), qPrintable(yaml));
        QVERIFY2(yaml.contains(QStringLiteral("scope: int8 matrix kernels on the Zephyr-7")), qPrintable(yaml));
        QVERIFY2(yaml.contains(QStringLiteral("lunch.txt\n    kind: text\n    used_for: left out")), qPrintable(yaml));
        QVERIFY2(yaml.contains(QStringLiteral("optimization_notes.pdf\n    kind: pdf\n    used_for: optimization")),
                 qPrintable(yaml));
        QVERIFY(yaml.contains(QStringLiteral("built_at: ")));
        QVERIFY(QFileInfo::exists(dir + QStringLiteral("/rules.yaml")));
        QVERIFY(!QFileInfo::exists(dir + QStringLiteral("/code_examples.md"))); // no document held examples
    }

    void aRunWithTheAgentSendsIt()
    {
        test::FakeLlmServer server;
        QVERIFY(server.listen());
        QString error;
        QVERIFY2(server.loadScriptText(script(), m_dir.path(), &error), qPrintable(error));
        const QString config = m_dir.filePath(QStringLiteral("run.yaml"));
        writeFile(config,
                  "target: fake\nproblem: kernel\nagent: zephyr\nmodels: {plan: [\"vllm::m1\"]}\n"
                  "search: {iterations: 1, beam_width: 1, plans_per_parent: 1, code_per_plan: 1, menu_dropout: 0}\n");
        QString output;
        const int code = runCli({QStringLiteral("run"), config, QStringLiteral("--store"), m_store}, server, 0,
                                &output);
        QVERIFY2(code == 0, qPrintable(output));
        auto store = RunStore::open(m_store, &error);
        QVERIFY(store);
        const QList<RunInfo> runs = store->runs();
        QCOMPARE(runs.size(), 1);
        QCOMPARE(runs.first().agent, QStringLiteral("zephyr"));
        const QList<LlmCall> plans = store->llmCalls(runs.first().id, QStringLiteral("plan"));
        QVERIFY(!plans.isEmpty());
        const QString prompt = plans.first().prompt;
        QVERIFY(prompt.contains(s_archReduced));
        QVERIFY(prompt.contains(QStringLiteral("### zmma(acc, a, b)")));
        QVERIFY(prompt.contains(QStringLiteral("17. Keep a 16x16 weight block stationary in the systolic array")));
        QVERIFY(prompt.contains(QStringLiteral("### zload(dst, src, rows)"))); // the whole ISA without the filter
    }

    void scaffoldFromATemplate()
    {
        // The CLI's --scaffold-from: the cpu target's evaluator and first problem as a start for "zephyr-npu".
        QString error;
        const QString backend = TargetScaffold::create(Repository(), QStringLiteral("zephyr-npu"),
                                                       QStringLiteral("cpu"), &error);
        QVERIFY2(!backend.isEmpty(), qPrintable(error));
        QCOMPARE(backend, m_dataHome + QStringLiteral("/autocomp-workbench/backends/zephyr-npu"));
        const auto target = Repository().target(QStringLiteral("zephyr-npu"), &error);
        QVERIFY2(target, qPrintable(error));
        QCOMPARE(target->name, QStringLiteral("zephyr-npu"));
        const QStringList problems = Repository().problemNames(QStringLiteral("zephyr-npu"));
        QCOMPARE(problems.size(), 1);
        QCOMPARE(problems.first(), Repository().problemNames(QStringLiteral("cpu")).first());
        QVERIFY(Repository().problem(QStringLiteral("zephyr-npu"), problems.first(), &error));
        // Never over an existing target.
        QVERIFY(TargetScaffold::create(Repository(), QStringLiteral("zephyr-npu"), QStringLiteral("cpu"), &error)
                    .isEmpty());
        QVERIFY2(error.contains(QStringLiteral("exists")), qPrintable(error));
        QVERIFY(TargetScaffold::create(Repository(), QStringLiteral("cpu"), QStringLiteral("rvv"), &error).isEmpty());
    }

    void isaFilterAtRunTime()
    {
        // search.isa_filter: the model is asked which ## sections matter (the script says 2: Compute); the plan
        // prompt carries only those, says what was kept, and the question is recorded with the parent.
        test::FakeLlmServer server;
        QVERIFY(server.listen());
        QString error;
        QVERIFY2(server.loadScriptText(script(), m_dir.path(), &error), qPrintable(error));
        const QString config = m_dir.filePath(QStringLiteral("run-filtered.yaml"));
        writeFile(config,
                  "target: fake\nproblem: kernel\nagent: zephyr\nmodels: {plan: [\"vllm::m1\"]}\n"
                  "search: {iterations: 1, beam_width: 1, plans_per_parent: 2, code_per_plan: 1, menu_dropout: 0, "
                  "isa_filter: true}\n");
        const QString storePath = m_dir.filePath(QStringLiteral("filtered.sqlite"));
        QString output;
        const int code = runCli({QStringLiteral("run"), config, QStringLiteral("--store"), storePath}, server, 0,
                                &output);
        QVERIFY2(code == 0, qPrintable(output));
        auto store = RunStore::open(storePath, &error);
        QVERIFY(store);
        const qint64 runId = store->runs().first().id;
        const QList<LlmCall> isa = store->llmCalls(runId, QStringLiteral("isa"));
        QCOMPARE(isa.size(), 1); // one question for the root, shared by its two plan requests
        QVERIFY(isa.first().prompt.contains(
            QStringLiteral("1. Data movement (zload(dst, src, rows))\n2. Compute (zmma(acc, a, b))")));
        QVERIFY(isa.first().candidateId > 0); // shown with the parent's prompts
        const QList<LlmCall> plans = store->llmCalls(runId, QStringLiteral("plan"));
        QCOMPARE(plans.size(), 2);
        for (const LlmCall &plan : plans) {
            QVERIFY(plan.prompt.contains(QStringLiteral("kept 1 of 2 sections: Compute")));
            QVERIFY(plan.prompt.contains(QStringLiteral("### zmma(acc, a, b)")));
            QVERIFY(!plan.prompt.contains(QStringLiteral("### zload")));
        }
    }
};

QTEST_MAIN(TestAgentBuilder)
#include "tst_agent_builder.moc"
