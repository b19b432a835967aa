#pragma once

#include <QByteArray>
#include <QString>
#include <QStringList>

namespace autocomp {

// Writes a POSIX ustar archive in memory: what the remote executors send (a candidate's files, a
// target's data) to `tar -x` on the far side, without starting a tar process per candidate.
class TarWriter
{
public:
    // Adds `dir`'s files and folders below it as `prefix/...` (prefix empty: at the top). Symbolic
    // links are followed. False (and the reason in error()) for an unreadable file or a name too long.
    // `skip`: paths relative to `dir` left out.
    bool addDirectory(const QString &dir, const QString &prefix, const QStringList &skip = {});
    bool addFile(const QString &path, const QString &name);
    // A file whose content is given (e.g. a rewritten copy).
    bool addData(const QString &name, const QByteArray &data, int mode = 0644)
    {
        return addEntry(name, '0', data, mode);
    }
    // The archive with its end marker; the writer is empty afterwards.
    QByteArray finish();
    QString error() const { return m_error; }

private:
    bool addEntry(const QString &name, char type, const QByteArray &data, int mode);

    QByteArray m_archive;
    QString m_error;
};

} // namespace autocomp
