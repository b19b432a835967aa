#pragma once

#include <QObject>
#include <QString>

class QAction;
class QMenu;
class QWidget;

namespace autocomp {

class MainWindow;
struct Candidate;

// Results out of the workbench, through the same functions as `autocomp export`: the shown run as a JSONL
// archive, an Autocomp output directory or its schedule, and the selected candidate's kernel (saved as a
// file, copied, or copied as a unified diff against the run's root). Uses MainWindow's public API only.
class ResultActions : public QObject
{
    Q_OBJECT
public:
    enum class RunFormat { Jsonl, AutocompDir, Schedule };

    explicit ResultActions(MainWindow *window);

    // Acting on the selected candidate (disabled without one, or without code).
    QAction *saveKernelAction() const { return m_saveKernel; }
    QAction *copyCodeAction() const { return m_copyCode; }
    QAction *copyDiffAction() const { return m_copyDiff; }
    // Opens the folder of the candidate's evaluation files (CandidateInspector::evaluationFolder) with the desktop's
    // file manager; disabled, its tooltip saying why, when none is on this machine.
    QAction *openFolderAction() const { return m_openFolder; }
    // Acting on the shown run.
    QAction *saveBestKernelAction() const { return m_saveBest; }
    QMenu *exportMenu() const { return m_exportMenu; }
    // The candidate actions, for a context menu.
    QList<QAction *> candidateActions() const;

    // The work behind the actions, without dialogs (what the dialogs call, and what tests call).
    // Writes the candidate's code byte for byte.
    bool saveKernel(qint64 candidateId, const QString &path, QString *error) const;
    bool exportRun(qint64 runId, RunFormat format, const QString &path, QString *error) const;
    // "<problem>_<id>.<ext>", the target's file extension (".txt" when the target is not known here).
    QString suggestedKernelName(const Candidate &candidate) const;
    // A unified diff (with hunk headers) of the candidate's code against the run's root, as `git diff` prints.
    QString diffAgainstRoot(qint64 candidateId) const;

    // The actions with their file dialogs.
    void saveKernelWithDialog(qint64 candidateId);
    void exportRunWithDialog(RunFormat format);

    // Re-reads what the candidate actions can do (an evaluation may have ended since the candidate was selected).
    void updateActions();

private:
    MainWindow *m_window;
    qint64 m_candidate = 0;
    QAction *m_saveKernel;
    QAction *m_copyCode;
    QAction *m_copyDiff;
    QAction *m_openFolder;
    QAction *m_saveBest;
    QMenu *m_exportMenu;
};

} // namespace autocomp
