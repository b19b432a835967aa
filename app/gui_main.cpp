// autocomp-workbench: the desktop GUI. Wiring only; the window lives in autocomp_views.
#include "main_window.h"
#include "settings.h"
#include "theme.h"
#include "model/repository.h"
#include "store/run_store.h"

#include <QApplication>
#include <QDir>
#include <QIcon>
#include <QMessageBox>
#include <QStringList>
#include <QTimer>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

const char *const s_usage =
    "Usage: autocomp-workbench [--store PATH] [Qt options]\n"
    "\n"
    "The Autocomp Workbench desktop application: browse and inspect optimization runs.\n"
    "\n"
    "Options:\n"
    "  --store PATH   the run store to open (default: $AUTOCOMP_STORE, else\n"
    "                 $XDG_DATA_HOME/autocomp-workbench/runs.sqlite)\n"
    "  --show VIEW    bring a view to the front at start (repeatable): graph, tree,\n"
    "                 chart, plan, code, evaluation, prompts, llm, diff\n"
    "  --candidate ID select a candidate of the shown run at start\n"
    "  --screenshot PATH  save the window to PATH (PNG) once shown, then exit\n"
    "  --version      print the version and exit\n"
    "  -h, --help     print this help and exit\n"
    "\n"
    "Without a display, use the command-line tool instead:\n"
    "  autocomp run CONFIG.yaml     start an optimization run\n"
    "  autocomp runs list           list the runs in the store\n";

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

} // namespace

int main(int argc, char **argv)
{
    // Options that need no display are handled before QApplication, which aborts without one.
    QString storePath;
    for (int i = 1; i < argc; ++i) {
        const char *arg = argv[i];
        if (std::strcmp(arg, "--help") == 0 || std::strcmp(arg, "-h") == 0) {
            std::fputs(s_usage, stdout);
            return 0;
        }
        if (std::strcmp(arg, "--version") == 0) {
            std::printf("autocomp-workbench %s\n", AUTOCOMP_VERSION);
            return 0;
        }
        if (std::strcmp(arg, "--store") == 0) {
            if (i + 1 >= argc) {
                std::fputs("autocomp-workbench: --store needs a path\n", stderr);
                return 2;
            }
            storePath = QString::fromLocal8Bit(argv[++i]);
        } else if (std::strncmp(arg, "--store=", 8) == 0) {
            storePath = QString::fromLocal8Bit(arg + 8);
        }
    }

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
    QApplication::setOrganizationName(QStringLiteral("autocomp"));
    QApplication::setApplicationName(QStringLiteral("autocomp-workbench"));
    QApplication::setApplicationDisplayName(QStringLiteral("Autocomp Workbench"));
    QApplication::setApplicationVersion(QStringLiteral(AUTOCOMP_VERSION));
    QApplication::setDesktopFileName(QStringLiteral(AUTOCOMP_APP_ID));
    // The installed icon (packaging/), also found next to a relocated copy where XDG_DATA_DIRS does not look.
    QIcon::setThemeSearchPaths(QIcon::themeSearchPaths()
                               << QDir(QApplication::applicationDirPath()).absoluteFilePath(QStringLiteral("../share/icons")));
    QApplication::setWindowIcon(QIcon::fromTheme(QStringLiteral(AUTOCOMP_APP_ID)));
    // Before any window exists, so nothing paints twice; the settings dialog applies later changes.
    autocomp::Theme::apply(autocomp::Settings().theme());

    // Qt removed its own options from argv; anything else left over is a mistake worth reporting.
    const QStringList arguments = QApplication::arguments();
    QStringList views;
    QString screenshotPath;
    qint64 candidateId = 0;
    for (qsizetype i = 1; i < arguments.size(); ++i) {
        const QString &arg = arguments.at(i);
        if (arg == QLatin1String("--store")) {
            ++i;
            continue;
        }
        if (arg == QLatin1String("--show") && i + 1 < arguments.size()) {
            views.append(arguments.at(++i));
            continue;
        }
        if (arg == QLatin1String("--candidate") && i + 1 < arguments.size()) {
            candidateId = arguments.at(++i).toLongLong();
            continue;
        }
        if (arg == QLatin1String("--screenshot") && i + 1 < arguments.size()) {
            screenshotPath = arguments.at(++i);
            continue;
        }
        if (!arg.startsWith(QLatin1String("--store="))) {
            std::fprintf(stderr, "autocomp-workbench: unknown argument %s\n%s", qPrintable(arg), s_usage);
            return 2;
        }
    }

    if (storePath.isEmpty())
        storePath = autocomp::RunStore::defaultPath();
    QString error;
    std::unique_ptr<autocomp::RunStore> store = autocomp::RunStore::open(storePath, &error);
    if (!store) {
        const QString message = QApplication::translate("main", "The run store %1 could not be opened:\n%2\n\n"
                                                                 "The file was left untouched.")
                                    .arg(QDir::toNativeSeparators(storePath), error);
        std::fprintf(stderr, "autocomp-workbench: %s\n", qPrintable(message));
        // A modal box on a platform nobody sees would hang scripts and tests instead of exiting.
        const QString platform = QGuiApplication::platformName();
        if (platform != QLatin1String("offscreen") && platform != QLatin1String("minimal"))
            QMessageBox::critical(nullptr, QApplication::translate("main", "Autocomp Workbench"), message);
        return 1;
    }

    // Every shipped target declares its metric's unit (MetricUnits) before the first run is listed.
    {
        const autocomp::Repository repository;
        for (const QString &name : repository.targetNames())
            repository.target(name, nullptr);
    }
    autocomp::MainWindow window(std::move(store));
    window.show();
    if (candidateId != 0)
        window.selectCandidate(candidateId);
    for (const QString &view : std::as_const(views)) {
        if (!window.showView(view)) {
            std::fprintf(stderr, "autocomp-workbench: unknown view %s\n%s", qPrintable(view), s_usage);
            return 2;
        }
    }
    if (!screenshotPath.isEmpty()) {
        // Long enough for the first layout and paint of every view.
        QTimer::singleShot(1500, &window, [&window, &app, screenshotPath] {
            const bool saved = window.grab().save(screenshotPath, "PNG");
            if (!saved)
                std::fprintf(stderr, "autocomp-workbench: could not write %s\n", qPrintable(screenshotPath));
            app.exit(saved ? 0 : 1);
        });
    }
    return app.exec();
}
