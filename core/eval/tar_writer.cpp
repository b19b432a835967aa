#include "eval/tar_writer.h"

#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QFileInfo>

#include <cstring>

namespace autocomp {

namespace {

void octal(char *field, int width, qint64 value)
{
    // width - 1 digits and a NUL, as ustar wants.
    const QByteArray digits = QByteArray::number(value, 8).rightJustified(width - 1, '0');
    std::memcpy(field, digits.constData(), size_t(width - 1));
    field[width - 1] = '\0';
}

int modeOf(const QFileInfo &info)
{
    int mode = 0;
    const QFile::Permissions p = info.permissions();
    mode |= p.testFlag(QFile::ReadOwner) ? 0400 : 0;
    mode |= p.testFlag(QFile::WriteOwner) ? 0200 : 0;
    mode |= p.testFlag(QFile::ExeOwner) ? 0100 : 0;
    mode |= p.testFlag(QFile::ReadGroup) ? 040 : 0;
    mode |= p.testFlag(QFile::ExeGroup) ? 010 : 0;
    mode |= p.testFlag(QFile::ReadOther) ? 04 : 0;
    mode |= p.testFlag(QFile::ExeOther) ? 01 : 0;
    return mode;
}

} // namespace

bool TarWriter::addEntry(const QString &name, char type, const QByteArray &data, int mode)
{
    QByteArray path = name.toUtf8();
    if (type == '5' && !path.endsWith('/'))
        path += '/';
    char header[512];
    std::memset(header, 0, sizeof header);
    // Names up to 100 bytes go in `name`; longer ones are split at a slash into prefix (155) + name.
    if (path.size() <= 100) {
        std::memcpy(header, path.constData(), size_t(path.size()));
    } else {
        qsizetype cut = path.lastIndexOf('/', path.endsWith('/') ? path.size() - 2 : path.size() - 1);
        while (cut > 155)
            cut = path.lastIndexOf('/', cut - 1);
        if (cut <= 0 || path.size() - cut - 1 > 100) {
            m_error = QStringLiteral("%1: the name is too long for the archive").arg(name);
            return false;
        }
        std::memcpy(header + 345, path.constData(), size_t(cut));
        std::memcpy(header, path.constData() + cut + 1, size_t(path.size() - cut - 1));
    }
    octal(header + 100, 8, mode);
    octal(header + 108, 8, 0);
    octal(header + 116, 8, 0);
    octal(header + 124, 12, type == '0' ? data.size() : 0);
    octal(header + 136, 12, 0);
    header[156] = type;
    std::memcpy(header + 257, "ustar", 6);
    std::memcpy(header + 263, "00", 2);
    std::memset(header + 148, ' ', 8);
    unsigned sum = 0;
    for (unsigned char c : header)
        sum += c;
    octal(header + 148, 7, sum);
    header[155] = ' ';
    m_archive.append(header, sizeof header);
    if (type == '0') {
        m_archive.append(data);
        m_archive.append(QByteArray((512 - data.size() % 512) % 512, '\0'));
    }
    return true;
}

bool TarWriter::addFile(const QString &path, const QString &name)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) {
        m_error = QStringLiteral("%1: cannot read: %2").arg(path, file.errorString());
        return false;
    }
    return addEntry(name, '0', file.readAll(), modeOf(QFileInfo(path)));
}

bool TarWriter::addDirectory(const QString &dir, const QString &prefix, const QStringList &skip)
{
    const QDir root(dir);
    if (!root.exists()) {
        m_error = QStringLiteral("%1: no such directory").arg(dir);
        return false;
    }
    if (!prefix.isEmpty() && !addEntry(prefix, '5', {}, 0755))
        return false;
    QDirIterator it(dir, QDir::Files | QDir::Dirs | QDir::NoDotAndDotDot | QDir::Hidden, QDirIterator::Subdirectories);
    while (it.hasNext()) {
        const QString path = it.next();
        if (skip.contains(root.relativeFilePath(path)))
            continue;
        const QString name = (prefix.isEmpty() ? QString() : prefix + QLatin1Char('/')) + root.relativeFilePath(path);
        const QFileInfo info(path);
        if (info.isDir() ? !addEntry(name, '5', {}, 0755) : !addFile(path, name))
            return false;
    }
    return true;
}

QByteArray TarWriter::finish()
{
    m_archive.append(QByteArray(1024, '\0'));
    return std::exchange(m_archive, {});
}

} // namespace autocomp
