#include "models/menu_insights_model.h"

#include "agents/prompt_builder.h"
#include "common/value_format.h"

#include <cmath>

namespace autocomp {

MenuInsightsModel::MenuInsightsModel(QObject *parent) : QAbstractTableModel(parent) {}

void MenuInsightsModel::setRecords(const QList<StrategyRecord> &records)
{
    beginResetModel();
    m_records = records;
    endResetModel();
}

int MenuInsightsModel::rowOf(const QString &strategy, const QString &model) const
{
    for (int row = 0; row < m_records.size(); ++row)
        if (m_records.at(row).strategy == strategy && m_records.at(row).model == model)
            return row;
    return -1;
}

int MenuInsightsModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_records.size());
}

int MenuInsightsModel::columnCount(const QModelIndex &parent) const { return parent.isValid() ? 0 : ColumnCount; }

QVariant MenuInsightsModel::data(const QModelIndex &index, int role) const
{
    if (!index.isValid() || index.row() >= m_records.size())
        return {};
    const StrategyRecord &r = m_records.at(index.row());
    if (role == StrategyRole)
        return r.strategy;
    if (role == RecordRowRole)
        return index.row();
    const double rate = r.offered > 0 ? double(r.chosen) / r.offered : std::nan("");
    if (role == SortRole) {
        switch (index.column()) {
        case StrategyColumn: return r.strategy;
        case ModelColumn: return r.model;
        case OfferedColumn: return r.offered;
        case ChosenColumn: return r.chosen;
        case ChosenRateColumn: return std::isnan(rate) ? -1.0 : rate;
        case CandidatesColumn: return r.candidates;
        case CompiledColumn: return r.compiled;
        case CorrectColumn: return r.correct;
        case BeamColumn: return r.enteredBeam;
        // No gain sorts below any gain.
        case MedianGainColumn: return std::isnan(r.medianGain) ? -1.0 : r.medianGain;
        case BestGainColumn: return std::isnan(r.bestGain) ? -1.0 : r.bestGain;
        case SourceColumn: return !r.onMenu ? 2 : r.proposed ? 1 : 0;
        default: return {};
        }
    }
    if (role == Qt::DisplayRole) {
        const auto ofCandidates = [&](int n) {
            return r.candidates > 0 ? QStringLiteral("%1 (%2%)").arg(n).arg(std::lround(100.0 * n / r.candidates))
                                    : QString::number(n);
        };
        switch (index.column()) {
        case StrategyColumn: return PromptBuilder::shortName(r.strategy, 34);
        case ModelColumn: return r.model.isEmpty() ? tr("all") : r.model;
        case OfferedColumn: return r.onMenu ? QString::number(r.offered) : QStringLiteral("—");
        case ChosenColumn: return r.chosen;
        case ChosenRateColumn:
            return std::isnan(rate) ? QStringLiteral("—") : QStringLiteral("%1%").arg(std::lround(100 * rate));
        case CandidatesColumn: return r.candidates;
        case CompiledColumn: return ofCandidates(r.compiled);
        case CorrectColumn: return ofCandidates(r.correct);
        case BeamColumn: return ofCandidates(r.enteredBeam);
        case MedianGainColumn:
            return std::isnan(r.medianGain) ? QStringLiteral("—") : ValueFormat::speedup(r.medianGain);
        case BestGainColumn: return std::isnan(r.bestGain) ? QStringLiteral("—") : ValueFormat::speedup(r.bestGain);
        case SourceColumn:
            return !r.onMenu ? tr("planner's idea") : r.proposed ? tr("one-shot menu") : tr("agent's menu");
        default: return {};
        }
    }
    if (role == Qt::ToolTipRole && index.column() == StrategyColumn)
        return !r.onMenu ? tr("%1\n(the planner's own idea: not on the menu)").arg(r.strategy)
            : r.proposed
            ? tr("%1\n(proposed by a model for a parent's menu: one-shot menu, not the agent's own)").arg(r.strategy)
            : r.strategy;
    if (role == Qt::TextAlignmentRole && index.column() >= OfferedColumn)
        return int(Qt::AlignRight | Qt::AlignVCenter);
    return {};
}

QVariant MenuInsightsModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal)
        return {};
    if (role == Qt::DisplayRole) {
        switch (section) {
        case StrategyColumn: return tr("Strategy");
        case ModelColumn: return tr("Model");
        case OfferedColumn: return tr("Offered");
        case ChosenColumn: return tr("Chosen");
        case ChosenRateColumn: return tr("Chosen %");
        case CandidatesColumn: return tr("Samples");
        case CompiledColumn: return tr("Compiled");
        case CorrectColumn: return tr("Correct");
        case BeamColumn: return tr("Beam");
        case MedianGainColumn: return tr("Median gain");
        case BestGainColumn: return tr("Best gain");
        case SourceColumn: return tr("Source");
        default: return {};
        }
    }
    if (role == Qt::ToolTipRole) {
        if (section == StrategyColumn)
            return tr("The menu item (or the planner's own idea, \"new: ...\")");
        switch (section) {
        case OfferedColumn: return tr("Plan prompts whose menu (after dropout) listed it");
        case ChosenColumn: return tr("Plans that chose it");
        case ChosenRateColumn:
            return tr("Chosen / offered (above 100% when planners chose it from outside the menu they were shown)");
        case CandidatesColumn: return tr("Code samples implementing those plans, fixes included");
        case CompiledColumn:
            return tr("Built and ran (correct or incorrect results); timeouts, crashes and rejections are not counted");
        case BeamColumn: return tr("Selected into a beam at least once");
        case MedianGainColumn:
            return tr(
                "Median of parent score / own score over its correct candidates (2× = twice as fast as its parent)");
        case BestGainColumn: return tr("Best parent score / own score over its correct candidates");
        case SourceColumn:
            return tr("Where the strategy came from: the agent's menu, a model's proposal for one parent's menu "
                      "(search.menu_strategy: "
                      "one-shot) or the planner's own idea; sort by it to see each apart");
        default: return {};
        }
    }
    return {};
}

} // namespace autocomp
