#include "catalog/target_scaffold.h"

#include "catalog/repository.h"

#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QFileInfo>
#include <QRegularExpression>

namespace autocomp {

namespace {

bool copyTree(const QString &from, const QString &to, QString *error)
{
    QDirIterator it(from, QDir::Files | QDir::Hidden | QDir::NoDotAndDotDot, QDirIterator::Subdirectories);
    while (it.hasNext()) {
        const QString source = it.next();
        const QString target = to + QLatin1Char('/') + QDir(from).relativeFilePath(source);
        if (!QDir().mkpath(QFileInfo(target).path()) || !QFile::copy(source, target)) {
            *error = QStringLiteral("%1: cannot be written").arg(target);
            return false;
        }
        QFile::setPermissions(target, QFile::permissions(source) | QFileDevice::WriteOwner);
    }
    return true;
}

} // namespace

QString TargetScaffold::create(const Repository &repository, const QString &name, const QString &templateTarget,
                               QString *error)
{
    static const QRegularExpression s_name(QStringLiteral("^[A-Za-z0-9][A-Za-z0-9_.-]*$"));
    if (!s_name.match(name).hasMatch()) {
        *error = QStringLiteral("target name '%1': use letters, digits, '.', '_' and '-'").arg(name);
        return {};
    }
    const std::optional<Target> source = repository.target(templateTarget, error);
    if (!source)
        return {};
    QString backend = Repository::userDataDir() + QStringLiteral("/backends/") + name;
    const QString sols = Repository::userDataDir() + QStringLiteral("/sols/") + name;
    for (const QString &dir : repository.dataDirs())
        if (QFileInfo::exists(dir + QStringLiteral("/backends/") + name)) {
            *error = QStringLiteral("a target '%1' exists (%2)").arg(name, dir + QStringLiteral("/backends/") + name);
            return {};
        }
    if (QFileInfo::exists(sols)) {
        *error = QStringLiteral("%1 exists").arg(sols);
        return {};
    }
    if (!copyTree(source->dir, backend, error))
        return {};
    // The copy names itself.
    QFile yaml(backend + QStringLiteral("/backend.yaml"));
    if (!yaml.open(QIODevice::ReadOnly)) {
        *error = QStringLiteral("%1: %2").arg(yaml.fileName(), yaml.errorString());
        return {};
    }
    QString text = QString::fromUtf8(yaml.readAll());
    yaml.close();
    static const QRegularExpression s_nameLine(QStringLiteral("^name:.*$"), QRegularExpression::MultilineOption);
    text.replace(s_nameLine, QStringLiteral("name: ") + name);
    text.prepend(QStringLiteral("# Made from the %1 target's backend.yaml: edit the steps for the new hardware.\n")
                     .arg(templateTarget));
    if (!yaml.open(QIODevice::WriteOnly | QIODevice::Truncate) || yaml.write(text.toUtf8()) < 0) {
        *error = QStringLiteral("%1: %2").arg(yaml.fileName(), yaml.errorString());
        return {};
    }
    yaml.close();
    const QStringList problems = repository.problemNames(templateTarget);
    if (!problems.isEmpty()) {
        QString problemError;
        if (const auto problem = repository.problem(templateTarget, problems.first(), &problemError))
            if (!copyTree(problem->dir, sols + QLatin1Char('/') + problems.first(), error))
                return {};
    }
    return backend;
}

} // namespace autocomp
