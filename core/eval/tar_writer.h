#pragma once

#include <QByteArray>
#include <QString>

namespace autocomp {

// Writes a POSIX ustar archive in memory: what the remote executors send (a candidate's files, a
// target's data) to `tar -x` on the far side, without starting a tar process per candidate.
class TarWriter
{
public:
    // Adds `dir`'s files and folders below it as `prefix/...` (prefix empty: at the top). Symbolic
    // links are followed. False (and the reason in error()) for an unreadable file or a name too long.
    bool addDirectory(const QString &dir, const QString &prefix);
    bool addFile(const QString &path, const QString &name);
    // The archive with its end marker; the writer is empty afterwards.
    QByteArray finish();
    QString error() const { return m_error; }

private:
    bool addEntry(const QString &name, char type, const QByteArray &data, int mode);

    QByteArray m_archive;
    QString m_error;
};

} // namespace autocomp
