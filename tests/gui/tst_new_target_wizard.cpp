// The New Target wizard against the local LLM server: documents (a text, an HTML page, a PDF made here), the
// plan shown before anything is sent, the build with its stages, a cancel and a second build that reuses the
// answers, and the agent opened from the workbench's Tools menu.
#include "editors/agent_editor.h"
#include "fake_llm_server.h"
#include "frame/main_window.h"
#include "catalog/repository.h"
#include "dialogs/new_target_wizard.h"
#include "pdf/poppler_pdf_reader.h"
#include "live/run_actions.h"
#include "store/run_store.h"

#include <QAction>
#include <QComboBox>
#include <QDir>
#include <QLabel>
#include <QLineEdit>
#include <QPainter>
#include <QPdfWriter>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

using namespace autocomp;

namespace {

QByteArray script(int reduceDelayMs)
{
    return QStringLiteral(R"(rules:
  - {name: filter, match: 'Task: filter', cycle: true, responses: [{content: "yes"}]}
  - {name: route-arch, match: 'Task: route[\s\S]*Document: arch\.txt', cycle: true, responses: [{content: "architecture"}]}
  - {name: route-isa, match: 'Task: route[\s\S]*Document: ops\.html', cycle: true, responses: [{content: "isa"}]}
  - {name: route-pdf, match: 'Task: route[\s\S]*Document: tuning\.pdf', cycle: true, responses: [{content: "optimization"}]}
  - {name: map, match: 'Task: map', cycle: true, responses: [{content: "notes"}]}
  - name: reduce-arch
    match: 'Task: reduce, writing architecture\.md'
    cycle: true
    responses: [{content: "Kestrel has 8 lanes of 32-bit floats.", delay_ms: %1}]
  - name: reduce-isa
    match: 'Task: reduce, writing isa_docs\.md'
    cycle: true
    responses: [{content: "## Vector\n\n### kfma(a, b, c)\nFused multiply-add on 8 lanes.", delay_ms: %1}]
  - name: reduce-opt
    match: 'Task: reduce, writing optimization_menu\.yaml'
    cycle: true
    responses: [{content: "- Interleave two kfma chains to hide their 4-cycle latency", delay_ms: %1}]
)")
        .arg(reduceDelayMs)
        .toUtf8();
}

void writeFile(const QString &path, const QByteArray &content)
{
    QDir().mkpath(QFileInfo(path).path());
    QFile file(path);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write(content);
}

} // namespace

class TestNewTargetWizard : public QObject
{
    Q_OBJECT
    QTemporaryDir m_dir;
    QString m_docs;
    std::unique_ptr<test::FakeLlmServer> m_server;

    void fill(NewTargetWizard &wizard, const QString &name)
    {
        wizard.findChild<QLineEdit *>(QStringLiteral("wizardAgentName"))->setText(name);
        wizard.setSources({m_docs});
        wizard.findChild<QPlainTextEdit *>(QStringLiteral("wizardScope"))
            ->setPlainText(QStringLiteral("float kernels on Kestrel"));
        wizard.findChild<QComboBox *>(QStringLiteral("wizardModel"))->setCurrentText(QStringLiteral("vllm::builder"));
    }

private Q_SLOTS:
    void initTestCase()
    {
        QVERIFY(m_dir.isValid());
        // The user's data, cache and settings dirs are this run's own: nothing an earlier run (or the machine's
        // user) left in ~/.local/share, ~/.cache or ~/.config reaches the test, and it leaves nothing there.
        qputenv("XDG_DATA_HOME", QFile::encodeName(m_dir.filePath(QStringLiteral("xdg/data"))));
        qputenv("XDG_CACHE_HOME", QFile::encodeName(m_dir.filePath(QStringLiteral("xdg/cache"))));
        qputenv("XDG_CONFIG_HOME", QFile::encodeName(m_dir.filePath(QStringLiteral("xdg/config"))));
        QVERIFY(Repository::userDataDir().startsWith(m_dir.path()));
        PopplerPdfReader::install();
        m_docs = m_dir.filePath(QStringLiteral("docs"));
        writeFile(m_docs + QStringLiteral("/arch.txt"),
                  "Kestrel: one core, 8 lanes of fp32, 64 KiB of local memory.\n");
        writeFile(m_docs + QStringLiteral("/ops.html"), "<h2>Vector</h2><h3>kfma</h3><pre>kfma(a, b, c)</pre>");
        QPdfWriter pdf(m_docs + QStringLiteral("/tuning.pdf"));
        QPainter painter(&pdf);
        painter.drawText(QRect(0, 0, pdf.width(), pdf.height() / 4), Qt::TextWordWrap,
                         QStringLiteral("Tuning: kfma has a latency of 4 cycles; interleave independent chains."));
        painter.end();
        m_server = std::make_unique<test::FakeLlmServer>();
        QVERIFY(m_server->listen());
        qputenv("VLLM_API_BASE", (m_server->baseUrl().toString() + QStringLiteral("/v1")).toUtf8());
    }

    void validatesTheFirstPage()
    {
        QString error;
        auto store = RunStore::open(m_dir.filePath(QStringLiteral("runs.sqlite")), &error);
        QVERIFY(store);
        NewTargetWizard wizard(store.get(), nullptr);
        wizard.show();
        QVERIFY(QTest::qWaitForWindowExposed(&wizard));
        wizard.findChild<QLineEdit *>(QStringLiteral("wizardAgentName"))->setText(QStringLiteral("bad name!"));
        wizard.next();
        QCOMPARE(wizard.currentId(), int(NewTargetWizard::SourcesPage));
        QVERIFY(wizard.findChild<QLabel *>(QStringLiteral("wizardSourcesError"))
                    ->text()
                    .contains(QStringLiteral("bad name!")));
        wizard.findChild<QLineEdit *>(QStringLiteral("wizardUrl"))->setText(QStringLiteral("ftp://x/y"));
        wizard.findChild<QPushButton *>(QStringLiteral("wizardAddUrl"))->click();
        QVERIFY(wizard.sources().isEmpty());
        wizard.findChild<QLineEdit *>(QStringLiteral("wizardUrl"))
            ->setText(QStringLiteral("https://vendor.example/docs/"));
        wizard.findChild<QPushButton *>(QStringLiteral("wizardAddUrl"))->click();
        QCOMPARE(wizard.sources(), QStringList{QStringLiteral("https://vendor.example/docs/")});
    }

    void planThenBuildThenCancelAndBuildAgain()
    {
        QString error;
        QVERIFY2(m_server->loadScriptText(script(1200), m_dir.path(), &error), qPrintable(error));
        auto store = RunStore::open(m_dir.filePath(QStringLiteral("runs.sqlite")), &error);
        QVERIFY(store);
        NewTargetWizard wizard(store.get(), nullptr);
        fill(wizard, QStringLiteral("kestrel"));
        wizard.show();
        QVERIFY(QTest::qWaitForWindowExposed(&wizard));
        QSignalSpy planShown(&wizard, &NewTargetWizard::planShown);
        wizard.next();
        QCOMPARE(wizard.currentId(), int(NewTargetWizard::PlanPage));
        QTRY_COMPARE_WITH_TIMEOUT(planShown.count(), 1, 20000);
        QCOMPARE(m_server->requestCount(), 0); // the plan costs nothing
        QVERIFY2(wizard.planText().contains(QStringLiteral("tuning.pdf  [pdf")), qPrintable(wizard.planText()));
        QVERIFY2(wizard.planText().contains(QStringLiteral("at most 12 (filter 3, route 3, map 3, reduce 3)")),
                 qPrintable(wizard.planText()));

        wizard.next();
        QCOMPARE(wizard.currentId(), int(NewTargetWizard::BuildPage));
        QSignalSpy finished(&wizard, &NewTargetWizard::buildFinished);
        QSignalSpy failed(&wizard, &NewTargetWizard::buildFailed);
        auto *build = wizard.findChild<QPushButton *>(QStringLiteral("wizardBuild"));
        auto *stage = wizard.findChild<QLabel *>(QStringLiteral("wizardStage"));
        build->click();
        // Cancel while the reduce answers are on their way: all three reduce calls left in one turn of the event
        // loop, and the server has received one of them at least.
        QTRY_VERIFY_WITH_TIMEOUT(stage->text().contains(QStringLiteral("reduce")), 20000);
        QTRY_VERIFY_WITH_TIMEOUT(m_server->requestCount() >= 10, 20000);
        wizard.findChild<QPushButton *>(QStringLiteral("wizardCancelBuild"))->click();
        QCOMPARE(failed.count(), 1);
        QVERIFY(failed.first().first().toString().contains(QStringLiteral("cancelled")));
        QVERIFY(build->isEnabled());
        QCOMPARE(build->text(), QStringLiteral("Build Again"));
        const int sentBefore = wizard.builder()->callsSent();
        const int reusedBefore = wizard.builder()->callsReused();
        QCOMPARE(sentBefore, 12);
        QCOMPARE(reusedBefore, 0);

        build->click();
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 30000);
        // No answer is paid twice: what was answered before the cancel comes from the store, and the calls that
        // were on their way when it came (the provider answers and bills them whether or not the build waits)
        // are waited for, not sent again. So each of the twelve requests reached the server exactly once,
        // whenever the cancel landed and however late the server read what had been sent before it. Counted
        // per request key (X-Autocomp-Request), not by when a request arrived.
        QHash<QByteArray, int> received;
        for (const auto &r : m_server->requests())
            ++received[r.header("x-autocomp-request")];
        for (auto it = received.cbegin(); it != received.cend(); ++it) {
            QVERIFY(!it.key().isEmpty());
            QVERIFY2(it.value() == 1, it.key().constData());
        }
        QCOMPARE(received.size(), 12);
        // The second build answered every call without sending one, and the usage line says what was paid.
        QCOMPARE(wizard.builder()->callsSent() - sentBefore, 0);
        QCOMPARE(wizard.builder()->callsReused() - reusedBefore, 12);
        const QString usage = wizard.findChild<QLabel *>(QStringLiteral("wizardUsage"))->text();
        QVERIFY2(usage.startsWith(QStringLiteral("12 call(s) sent, 12 answered from the store")), qPrintable(usage));
        const auto agent = Repository::loadAgent(finished.first().first().toString(), &error);
        QVERIFY2(agent, qPrintable(error));
        QCOMPARE(agent->menu.last(), QStringLiteral("Interleave two kfma chains to hide their 4-cycle latency"));
        QVERIFY(agent->isaDocs.contains(QStringLiteral("### kfma(a, b, c)")));
    }

    void toolsMenuOpensTheAgentInTheEditor()
    {
        QString error;
        QVERIFY2(m_server->loadScriptText(script(0), m_dir.path(), &error), qPrintable(error));
        auto store = RunStore::open(m_dir.filePath(QStringLiteral("runs.sqlite")), &error);
        QVERIFY(store);
        MainWindow window(std::move(store));
        window.show();
        auto *action = window.findChild<QAction *>(QStringLiteral("newTargetAction"));
        QVERIFY(action);
        action->trigger();
        auto *wizard = window.findChild<NewTargetWizard *>();
        QVERIFY(wizard);
        fill(*wizard, QStringLiteral("kestrel2"));
        // The preview starts from the first problem of the agent's target.
        wizard->findChild<QLineEdit *>(QStringLiteral("wizardTarget"))->setText(QStringLiteral("cpu"));
        QSignalSpy planShown(wizard, &NewTargetWizard::planShown);
        wizard->next();
        QTRY_COMPARE_WITH_TIMEOUT(planShown.count(), 1, 20000);
        wizard->next();
        QSignalSpy finished(wizard, &NewTargetWizard::buildFinished);
        wizard->startBuild();
        QTRY_COMPARE_WITH_TIMEOUT(finished.count(), 1, 30000);
        wizard->accept();
        auto *editor = window.findChild<AgentEditor *>();
        QVERIFY(editor);
        QTRY_VERIFY(editor->isVisible());
        QCOMPARE(editor->agentName(), QStringLiteral("kestrel2"));
        QVERIFY(editor->isUserCopy());
        auto *preview = editor->findChild<QPlainTextEdit *>(QStringLiteral("promptPreview"));
        QVERIFY(preview);
        QVERIFY2(preview->toPlainText().contains(QStringLiteral("Kestrel has 8 lanes of 32-bit floats.")),
                 qPrintable(preview->toPlainText().left(400)));
    }
};

QTEST_MAIN(TestNewTargetWizard)
#include "tst_new_target_wizard.moc"
