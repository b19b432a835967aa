// autocomp-workbench: the desktop GUI. Wiring only; the window lives in autocomp_views.
#include "editors/diff_view.h"
#include "frame/main_window.h"
#include "dialogs/new_run_dialog.h"
#include "dialogs/new_target_wizard.h"
#include "charts/runs_comparison_view.h"
#include "panels/study_view.h"
#include "live/run_actions.h"
#ifdef AUTOCOMP_HAVE_POPPLER
#include "pdf/poppler_pdf_reader.h"
#endif
#include "common/settings.h"
#include "common/theme.h"
#include "catalog/repository.h"
#include "store/run_store.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QDir>
#include <QIcon>
#include <QLineEdit>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QPointer>
#include <QStringList>
#include <QTimer>
#include <QtConcurrent/QtConcurrentRun>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>

namespace {

// The workbench's options, for QCommandLineParser. Qt's own (-platform, -style, ...) are taken out of argv
// by QApplication before the full parse; the early parse (help and version, which need no display) skips them.
struct Options
{
    QCommandLineOption store{
        QStringLiteral("store"),
        QStringLiteral(
            "The run store to open (default: $AUTOCOMP_STORE, else $XDG_DATA_HOME/autocomp-workbench/runs.sqlite)."),
        QStringLiteral("PATH")};
    QCommandLineOption show{
        QStringLiteral("show"),
        QStringLiteral("Bring a view to the front at start (repeatable): graph, tree, chart, menu, plan, code, "
                       "evaluation, prompts, llm, diff, wide-diff (the diff in the middle), unified-diff, "
                       "compare (every run side by side, in its own window), study (the store's parameter studies, "
                       "in its own window), new-run (the New Run dialog), new-target (the wizard)."),
        QStringLiteral("VIEW")};
    QCommandLineOption candidate{QStringLiteral("candidate"),
                                 QStringLiteral("Select a candidate of the shown run at start."), QStringLiteral("ID")};
    QCommandLineOption screenshot{
        QStringLiteral("screenshot"),
        QStringLiteral("Save the window (or the last one --show opened) to PATH (PNG) once shown, then exit."),
        QStringLiteral("PATH")};
    QCommandLineOption search{QStringLiteral("search"),
                              QStringLiteral("Search the shown run's candidates for TEXT at start."),
                              QStringLiteral("TEXT")};
    QCommandLineOption newTargetDocs{
        QStringLiteral("new-target-docs"),
        QStringLiteral("With --show new-target: these documents, and on to the plan page."), QStringLiteral("PATH")};

    void addTo(QCommandLineParser *parser) const
    {
        parser->setApplicationDescription(
            QStringLiteral("The Autocomp Workbench desktop application: start, watch and inspect optimization runs.\n\n"
                           "Without a display, use the command-line tool instead:\n"
                           "  autocomp run CONFIG.yaml     start an optimization run\n"
                           "  autocomp runs list           list the runs in the store"));
        parser->addOptions({store, show, candidate, screenshot, search, newTargetDocs});
    }
};

bool hasDisplay(int argc, char **argv)
{
#if defined(Q_OS_UNIX) && !defined(Q_OS_MACOS)
    for (int i = 1; i < argc; ++i)
        if (std::strcmp(argv[i], "-platform") == 0)
            return true;
    return qEnvironmentVariableIsSet("DISPLAY") || qEnvironmentVariableIsSet("WAYLAND_DISPLAY")
        || qEnvironmentVariableIsSet("QT_QPA_PLATFORM");
#else
    Q_UNUSED(argc);
    Q_UNUSED(argv);
    return true;
#endif
}

// --help and --version need no display: answered before QApplication, which aborts without one. Returns the exit
// code when one of them was asked for.
std::optional<int> answerHelpOrVersion(int argc, char **argv, const Options &options)
{
    QStringList rawArguments;
    for (int i = 0; i < argc; ++i)
        rawArguments << QString::fromLocal8Bit(argv[i]);
    QCommandLineParser early;
    early.setSingleDashWordOptionMode(QCommandLineParser::ParseAsLongOptions);
    const QCommandLineOption help = early.addHelpOption();
    const QCommandLineOption version = early.addVersionOption();
    options.addTo(&early);
    early.parse(rawArguments); // Qt's options are still in; errors wait for the full parse
    if (early.isSet(help)) {
        std::fputs(
            qPrintable(
                early.helpText().replace(QStringLiteral("<executable_name>"), QStringLiteral("autocomp-workbench"))
                + QStringLiteral("\nQt's options (-platform NAME, -style NAME, ...) are accepted too.\n")),
            stdout);
        return 0;
    }
    if (early.isSet(version)) {
        std::printf("autocomp-workbench %s\n", AUTOCOMP_VERSION);
        return 0;
    }
    return std::nullopt;
}

// The application's names, icon and theme, before any window exists.
void setUpApplication()
{
#ifdef AUTOCOMP_HAVE_POPPLER
    autocomp::PopplerPdfReader::install();
#endif
    QApplication::setOrganizationName(QStringLiteral("autocomp"));
    QApplication::setApplicationName(QStringLiteral("autocomp-workbench"));
    QApplication::setApplicationDisplayName(QStringLiteral("Autocomp Workbench"));
    QApplication::setApplicationVersion(QStringLiteral(AUTOCOMP_VERSION));
    QApplication::setDesktopFileName(QStringLiteral(AUTOCOMP_APP_ID));
    // The installed icon (packaging/), also found next to a relocated copy where XDG_DATA_DIRS does not look.
    QIcon::setThemeSearchPaths(QIcon::themeSearchPaths() << QDir(QApplication::applicationDirPath())
                                                                .absoluteFilePath(QStringLiteral("../share/icons")));
    QApplication::setWindowIcon(QIcon::fromTheme(QStringLiteral(AUTOCOMP_APP_ID)));
    // Before any window exists, so nothing paints twice; the settings dialog applies later changes.
    autocomp::Theme::apply(autocomp::Settings().theme());
}

// Qt removed its own options from argv; anything else left over is a mistake worth reporting. False (the message
// printed) when the arguments are wrong; `candidateId` is 0 without --candidate.
bool parseArguments(QCommandLineParser *parser, const Options &options, qint64 *candidateId)
{
    parser->setSingleDashWordOptionMode(QCommandLineParser::ParseAsLongOptions);
    parser->addHelpOption();
    parser->addVersionOption();
    options.addTo(parser);
    if (!parser->parse(QApplication::arguments())) {
        std::fprintf(stderr, "autocomp-workbench: %s\n(autocomp-workbench --help lists the options)\n",
                     qPrintable(parser->errorText()));
        return false;
    }
    if (!parser->positionalArguments().isEmpty()) {
        std::fprintf(stderr,
                     "autocomp-workbench: unexpected argument %s\n(autocomp-workbench --help lists the options)\n",
                     qPrintable(parser->positionalArguments().constFirst()));
        return false;
    }
    bool idOk = true;
    *candidateId = parser->isSet(options.candidate) ? parser->value(options.candidate).toLongLong(&idOk) : 0;
    if (!idOk || *candidateId < 0) {
        std::fprintf(stderr, "autocomp-workbench: --candidate needs a candidate id, not '%s'\n",
                     qPrintable(parser->value(options.candidate)));
        return false;
    }
    return true;
}

// The run store at `storePath` (empty: the default). On failure the file is left untouched, the reason printed and
// shown in a message box where someone can see it, and null returned.
std::unique_ptr<autocomp::RunStore> openStore(QString storePath)
{
    if (storePath.isEmpty())
        storePath = autocomp::RunStore::defaultPath();
    QString error;
    std::unique_ptr<autocomp::RunStore> store = autocomp::RunStore::open(storePath, &error);
    if (!store) {
        const QString message = QApplication::translate("main",
                                                        "The run store %1 could not be opened:\n%2\n\n"
                                                        "The file was left untouched.")
                                    .arg(QDir::toNativeSeparators(storePath), error);
        std::fprintf(stderr, "autocomp-workbench: %s\n", qPrintable(message));
        // A modal box on a platform nobody sees would hang scripts and tests instead of exiting.
        const QString platform = QGuiApplication::platformName();
        if (platform != QLatin1String("offscreen") && platform != QLatin1String("minimal"))
            QMessageBox::critical(nullptr, QApplication::translate("main", "Autocomp Workbench"), message);
    }
    return store;
}

// Brings each --show view to the front, in order; `shot` becomes the last window one opened (what --screenshot
// saves). False (the message printed) for an unknown view.
bool showViews(autocomp::MainWindow &window, const QCommandLineParser &parser, const Options &options,
               QPointer<QWidget> *shot)
{
    for (const QString &view : parser.values(options.show)) {
        if (view == QLatin1String("compare")) {
            QList<qint64> ids;
            for (const autocomp::RunInfo &run : window.store()->runs())
                ids << run.id;
            *shot = window.openRunsComparison(ids);
        } else if (view == QLatin1String("study")) {
            autocomp::StudyView *study = window.openStudyView();
            // The main window's size once the window system has applied -geometry (before --screenshot's grab).
            QTimer::singleShot(1000, study, [study, &window] { study->resize(window.size()); });
            *shot = study;
        } else if (view == QLatin1String("new-run")) {
            *shot = window.runActions()->showNewRunDialog();
        } else if (view == QLatin1String("new-target")) {
            autocomp::NewTargetWizard *wizard = window.runActions()->showNewTargetWizard();
            if (parser.isSet(options.newTargetDocs)) {
                wizard->findChild<QLineEdit *>(QStringLiteral("wizardAgentName"))
                    ->setText(QStringLiteral("example-npu"));
                wizard->findChild<QPlainTextEdit *>(QStringLiteral("wizardScope"))
                    ->setPlainText(QStringLiteral("int8 matrix kernels"));
                wizard->setSources(parser.values(options.newTargetDocs));
                wizard->next();
            }
            *shot = wizard;
        } else if (view == QLatin1String("wide-diff")) {
            window.setDiffInCenter(true);
            window.showView(QStringLiteral("diff"));
        } else if (view == QLatin1String("unified-diff")) {
            window.diffView()->setDiffLayout(autocomp::DiffView::Layout::Unified);
            window.showView(QStringLiteral("diff"));
        } else if (!window.showView(view)) {
            std::fprintf(
                stderr,
                "autocomp-workbench: unknown view %s (graph, tree, chart, menu, plan, code, evaluation, prompts, llm, "
                "diff, wide-diff, unified-diff, compare, study, new-run, new-target)\n",
                qPrintable(view));
            return false;
        }
    }
    return true;
}

} // namespace

int main(int argc, char **argv)
{
    const Options options;
    if (const std::optional<int> answered = answerHelpOrVersion(argc, argv, options))
        return *answered;

    if (!hasDisplay(argc, argv)) {
        std::fputs("autocomp-workbench: no display found (DISPLAY and WAYLAND_DISPLAY are unset).\n"
                   "Use the command-line tool instead:\n"
                   "  autocomp run CONFIG.yaml     start an optimization run\n"
                   "  autocomp runs list           list the runs in the store\n"
                   "or set QT_QPA_PLATFORM (e.g. offscreen) to run the GUI without a screen.\n",
                   stderr);
        return 2;
    }

    QApplication app(argc, argv);
    setUpApplication();

    QCommandLineParser parser;
    qint64 candidateId = 0;
    if (!parseArguments(&parser, options, &candidateId))
        return 2;
    const QString screenshotPath = parser.value(options.screenshot);
    std::unique_ptr<autocomp::RunStore> store = openStore(parser.value(options.store));
    if (!store)
        return 1;

    // Runs stored before their metric's unit was get their target's before the first run is listed.
    if (!store->isReadOnly())
        store->fillMetricUnits([repository = autocomp::Repository()](const autocomp::RunInfo &run) {
            return repository.metricUnitOf(run);
        });
    autocomp::MainWindow window(std::move(store));
    window.show();
    // Whether each target can run here (its availability and hardware checks, sandboxed like its steps: a
    // Python probe takes a second or two) is asked in the background now, so the New Run dialog finds the
    // answers ready instead of making the user wait for them (Target caches them per process).
    (void)QtConcurrent::run([] {
        const autocomp::Repository repository;
        for (const QString &name : repository.targetNames())
            if (const auto target = repository.target(name, nullptr); target && target->available())
                target->hardwareAbsence();
    });
    if (candidateId != 0)
        window.selectCandidate(candidateId);
    if (parser.isSet(options.search))
        window.searchCandidates(parser.value(options.search));
    QPointer<QWidget> shot = &window; // what --screenshot saves
    if (!showViews(window, parser, options, &shot))
        return 2;
    if (!screenshotPath.isEmpty()) {
        // Long enough for the first layout and paint of every view.
        QTimer::singleShot(2500, &window, [&window, &app, shot, screenshotPath] {
            const bool saved =
                (shot ? shot.data() : static_cast<QWidget *>(&window))->grab().save(screenshotPath, "PNG");
            if (!saved)
                std::fprintf(stderr, "autocomp-workbench: could not write %s\n", qPrintable(screenshotPath));
            app.exit(saved ? 0 : 1);
        });
    }
    return app.exec();
}
