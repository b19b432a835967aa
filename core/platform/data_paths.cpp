#include "platform/data_paths.h"

#include <QCoreApplication>
#include <QDir>
#include <QFileInfo>
#include <QStandardPaths>

namespace autocomp::DataPaths {

QString userDataDir()
{
    return QStandardPaths::writableLocation(QStandardPaths::GenericDataLocation)
        + QStringLiteral("/autocomp-workbench");
}

QString shippedDataDir()
{
    // Exactly one shipped copy, so an installed program never falls back to the tree it was built
    // from (a file missing from the package would go unnoticed) and a program in the build tree never
    // reads an older installed copy.
    const QString appDir = QCoreApplication::instance() ? QCoreApplication::applicationDirPath() : QString();
    if (!appDir.isEmpty()) {
        const QString installed = QDir(appDir).absoluteFilePath(QStringLiteral("../share/autocomp-workbench"));
        if (QFileInfo(installed).isDir())
            return QDir::cleanPath(installed);
    }
    const QString buildDir = QDir(QStringLiteral(AUTOCOMP_BUILD_DIR)).canonicalPath();
    const QString canonicalAppDir = appDir.isEmpty() ? QString() : QDir(appDir).canonicalPath();
    const bool inBuildTree = canonicalAppDir.isEmpty()
        || (!buildDir.isEmpty()
            && (canonicalAppDir == buildDir || canonicalAppDir.startsWith(buildDir + QLatin1Char('/'))));
    return inBuildTree ? QStringLiteral(AUTOCOMP_SOURCE_DATA_DIR) : QStringLiteral(AUTOCOMP_INSTALL_DATA_DIR);
}

QStringList searchDirs()
{
    QStringList dirs;
    const QString env = qEnvironmentVariable("AUTOCOMP_DATA_DIR");
    if (!env.isEmpty())
        dirs << env;
    dirs << userDataDir() << shippedDataDir();
    dirs.removeDuplicates();
    return dirs;
}

QString kitDir()
{
    for (const QString &dir : searchDirs()) {
        const QString kit = QDir(dir).absoluteFilePath(QStringLiteral("backends/common"));
        if (QFileInfo(kit).isDir())
            return QDir::cleanPath(kit);
    }
    return QDir::cleanPath(QDir(shippedDataDir()).absoluteFilePath(QStringLiteral("backends/common")));
}

} // namespace autocomp::DataPaths
