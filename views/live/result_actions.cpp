#include "live/result_actions.h"

#include "panels/candidate_inspector.h"
#include "editors/diff_view.h"
#include "frame/main_window.h"
#include "model/candidate.h"
#include "catalog/repository.h"
#include "exchange/autocomp_dir.h"
#include "exchange/run_archive.h"
#include "store/run_store.h"

#include <QAction>
#include <QClipboard>
#include <QDesktopServices>
#include <QDir>
#include <QFileDialog>
#include <QGuiApplication>
#include <QMenu>
#include <QMessageBox>
#include <QSaveFile>
#include <QStatusBar>
#include <QUrl>

namespace autocomp {

ResultActions::ResultActions(MainWindow *window)
    : QObject(window)
    , m_window(window)
    , m_saveKernel(new QAction(tr("Save &Kernel As…"), this))
    , m_copyCode(new QAction(tr("&Copy Code"), this))
    , m_copyDiff(new QAction(tr("Copy as &Diff against Root"), this))
    , m_openFolder(new QAction(tr("Open &Folder of the Evaluation's Files"), this))
    , m_saveBest(new QAction(tr("Save &Best Kernel As…"), this))
    , m_exportMenu(new QMenu(tr("&Export Run"), window))
{
    m_saveKernel->setObjectName(QStringLiteral("saveKernelAction"));
    m_saveKernel->setToolTip(tr("Write the selected candidate's code to a file, exactly as evaluated"));
    m_copyCode->setObjectName(QStringLiteral("copyCodeAction"));
    m_copyDiff->setObjectName(QStringLiteral("copyDiffAction"));
    m_copyDiff->setToolTip(tr("A unified diff of the selected candidate's code against the run's starting code"));
    m_saveBest->setObjectName(QStringLiteral("saveBestKernelAction"));
    m_openFolder->setObjectName(QStringLiteral("openEvalFolderAction"));
    connect(m_openFolder, &QAction::triggered, this, [this] {
        QString why;
        const QString folder = CandidateInspector::evaluationFolder(m_window->store()->evaluationSteps(m_candidate),
                                                                    &why);
        if (folder.isEmpty())
            m_window->statusBar()->showMessage(why, 8000);
        else if (!QDesktopServices::openUrl(QUrl::fromLocalFile(folder)))
            m_window->statusBar()->showMessage(tr("No program here opens folders; the files are in %1").arg(folder),
                                               15000);
    });
    m_exportMenu->setObjectName(QStringLiteral("exportRunMenu"));
    connect(m_saveKernel, &QAction::triggered, this, [this] { saveKernelWithDialog(m_candidate); });
    connect(m_copyCode, &QAction::triggered, this, [this] {
        if (const auto c = m_window->store()->candidate(m_candidate)) {
            QGuiApplication::clipboard()->setText(c->code);
            m_window->statusBar()->showMessage(tr("The code of candidate %1 is on the clipboard").arg(m_candidate),
                                               4000);
        }
    });
    connect(m_copyDiff, &QAction::triggered, this, [this] {
        QGuiApplication::clipboard()->setText(diffAgainstRoot(m_candidate));
        m_window->statusBar()->showMessage(
            tr("The diff of candidate %1 against the root is on the clipboard").arg(m_candidate), 4000);
    });
    connect(m_saveBest, &QAction::triggered, this, [this] {
        if (const auto run = m_window->store()->run(m_window->currentRunId()); run && run->bestCandidateId != 0)
            saveKernelWithDialog(run->bestCandidateId);
    });
    m_exportMenu->addAction(tr("Run Archive (&JSONL)…"), this, [this] { exportRunWithDialog(RunFormat::Jsonl); })
        ->setObjectName(QStringLiteral("exportJsonlAction"));
    m_exportMenu
        ->addAction(tr("&Autocomp Output Directory…"), this, [this] { exportRunWithDialog(RunFormat::AutocompDir); })
        ->setObjectName(QStringLiteral("exportAutocompDirAction"));
    m_exportMenu->addAction(tr("&Schedule…"), this, [this] { exportRunWithDialog(RunFormat::Schedule); })
        ->setObjectName(QStringLiteral("exportScheduleAction"));
    connect(window, &MainWindow::currentCandidateChanged, this, [this](qint64 id) {
        m_candidate = id;
        updateActions();
    });
    connect(window, &MainWindow::currentRunChanged, this, [this] {
        m_candidate = 0;
        updateActions();
    });
    updateActions();
}

QList<QAction *> ResultActions::candidateActions() const
{
    return {m_saveKernel, m_copyCode, m_copyDiff, m_openFolder};
}

void ResultActions::updateActions()
{
    const auto candidate = m_candidate != 0 ? m_window->store()->candidate(m_candidate) : std::nullopt;
    const bool code = candidate && !candidate->code.isEmpty();
    for (QAction *a : candidateActions())
        a->setEnabled(code);
    m_copyDiff->setEnabled(code && candidate->origin != CandidateOrigin::Root);
    QString why = tr("Select a candidate");
    const QString folder = candidate
        ? CandidateInspector::evaluationFolder(m_window->store()->evaluationSteps(m_candidate), &why)
        : QString();
    m_openFolder->setEnabled(!folder.isEmpty());
    m_openFolder->setToolTip(
        folder.isEmpty() ? why : tr("Opens %1 (work/: sources and build outputs; judge/: reports)").arg(folder));
    m_openFolder->setStatusTip(m_openFolder->toolTip());
    const auto run = m_window->currentRunId() != 0 ? m_window->store()->run(m_window->currentRunId()) : std::nullopt;
    m_saveBest->setEnabled(run && run->bestCandidateId != 0);
    m_exportMenu->setEnabled(run.has_value());
}

bool ResultActions::saveKernel(qint64 candidateId, const QString &path, QString *error) const
{
    const auto candidate = m_window->store()->candidate(candidateId);
    if (!candidate || candidate->code.isEmpty()) {
        if (error)
            *error = candidate ? tr("candidate %1 has no code").arg(candidateId)
                               : tr("candidate %1 does not exist").arg(candidateId);
        return false;
    }
    QSaveFile file(path);
    if (!file.open(QIODevice::WriteOnly) || file.write(candidate->code.toUtf8()) < 0 || !file.commit()) {
        if (error)
            *error = tr("%1: cannot write: %2").arg(path, file.errorString());
        return false;
    }
    return true;
}

bool ResultActions::exportRun(qint64 runId, RunFormat format, const QString &path, QString *error) const
{
    RunStore &store = *m_window->store();
    switch (format) {
    case RunFormat::Jsonl: return exportRunJsonl(store, runId, path, error);
    case RunFormat::AutocompDir: return exportAutocompDir(store, runId, path, error);
    case RunFormat::Schedule: return exportSchedule(store, runId, path, error);
    }
    return false;
}

QString ResultActions::suggestedKernelName(const Candidate &candidate) const
{
    const auto run = m_window->store()->run(candidate.runId);
    QString extension = QStringLiteral("txt");
    QString problem = QStringLiteral("kernel");
    if (run) {
        problem = run->problem;
        if (const auto target = Repository().target(run->target, nullptr))
            extension = target->fileExtension;
    }
    problem.replace(QLatin1Char('/'), QLatin1Char('_'));
    return QStringLiteral("%1_%2.%3").arg(problem).arg(candidate.id).arg(extension);
}

QString ResultActions::diffAgainstRoot(qint64 candidateId) const
{
    const auto candidate = m_window->store()->candidate(candidateId);
    if (!candidate)
        return {};
    std::optional<Candidate> root;
    for (const Candidate &c : m_window->store()->candidates(candidate->runId))
        if (c.origin == CandidateOrigin::Root)
            root = c;
    const QString name = suggestedKernelName(*candidate);
    return DiffView::unifiedPatch(root ? root->code : QString(), candidate->code, name, name);
}

void ResultActions::saveKernelWithDialog(qint64 candidateId)
{
    const auto candidate = m_window->store()->candidate(candidateId);
    if (!candidate || candidate->code.isEmpty())
        return;
    const QString path = QFileDialog::getSaveFileName(m_window, tr("Save Kernel of Candidate %1").arg(candidateId),
                                                      QDir::home().filePath(suggestedKernelName(*candidate)));
    if (path.isEmpty())
        return;
    QString error;
    if (!saveKernel(candidateId, path, &error)) {
        QMessageBox::warning(m_window, tr("Save Kernel"), error);
        return;
    }
    m_window->statusBar()->showMessage(
        tr("Candidate %1 saved to %2").arg(candidateId).arg(QDir::toNativeSeparators(path)), 6000);
}

void ResultActions::exportRunWithDialog(RunFormat format)
{
    const qint64 runId = m_window->currentRunId();
    if (runId == 0)
        return;
    const QString title = tr("Export Run %1").arg(runId);
    QString path;
    switch (format) {
    case RunFormat::Jsonl:
        path = QFileDialog::getSaveFileName(m_window, title,
                                            QDir::home().filePath(QStringLiteral("run%1.jsonl").arg(runId)),
                                            tr("Run archives (*.jsonl)"));
        break;
    case RunFormat::AutocompDir:
        // A new folder, as `autocomp export --format autocomp-dir --out DIR` makes.
        path = QFileDialog::getSaveFileName(m_window, title,
                                            QDir::home().filePath(QStringLiteral("run%1-autocomp").arg(runId)));
        break;
    case RunFormat::Schedule:
        path = QFileDialog::getSaveFileName(m_window, title,
                                            QDir::home().filePath(QStringLiteral("run%1-schedule.yaml").arg(runId)),
                                            tr("Schedules (*.yaml)"));
        break;
    }
    if (path.isEmpty())
        return;
    QString error;
    if (!exportRun(runId, format, path, &error)) {
        QMessageBox::warning(m_window, title, error);
        return;
    }
    m_window->statusBar()->showMessage(tr("Run %1 exported to %2").arg(runId).arg(QDir::toNativeSeparators(path)),
                                       6000);
}

} // namespace autocomp
